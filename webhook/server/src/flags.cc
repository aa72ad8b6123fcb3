#include "switchboard/webhook_server/flags.h"

#include <cstdint>
#include <limits>

#include "switchboard/common/flags.h"

namespace switchboard::webhook_server {
namespace {

constexpr const char* kUsage =
    R"(switchboard-webhook: validating and defaulting admission webhook for
pubsub.switchboard.dev PubSubBackend and NatsServer (HTTPS only, TLS 1.2+).

Usage: switchboard-webhook --tls-cert-file FILE --tls-key-file FILE [flags]

Paths on --port (HTTPS): POST /validate, POST /mutate, GET /healthz,
GET /readyz (ready once the object cache has synced), GET /metrics.)";

// Every flag, bound to `f`: the one list both ParseFlags and Usage read.
void Register(flags::FlagSet* set, Flags* f) {
  using std::chrono::milliseconds;
  set->String("tls-cert-file", &f->tls_cert_file,
              "PEM serving certificate (chain first); reloaded when it changes")
      .Metavar("FILE");
  set->String("tls-key-file", &f->tls_key_file, "PEM private key; reloaded when it changes")
      .Metavar("FILE");
  set->Int("port", &f->port, "HTTPS port (default 9443)", 0, 65535);
  set->String("bind-address", &f->bind_address, "address to listen on (default 0.0.0.0)")
      .Metavar("ADDR");
  set->Int("metrics-port", &f->metrics_port,
           "plain-HTTP port for /metrics, 0 to turn off (default 8080)", 0, 65535);
  set->String("kubeconfig", &f->kubeconfig,
              "cluster to watch for existing objects (default $KUBECONFIG,\n"
              "else the in-cluster service account)")
      .Metavar("FILE");
  set->Int("max-body-bytes", &f->max_body_bytes,
           "largest request body accepted; larger gets 413 (default 4194304)", 1024,
           std::numeric_limits<int32_t>::max());
  set->Int("worker-threads", &f->worker_threads,
           "threads serving connections, 0 for one per CPU up to 16\n"
           "(default 0); connections do not take a thread each",
           0, 1024);
  set->Int("max-connections", &f->max_connections,
           "open HTTPS connections at most; at the limit the one idle\n"
           "the longest is closed to make room (default 1024)",
           1, 1000000);
  set->Duration("request-timeout", &f->request_timeout,
                "deadline for a TLS handshake, for a whole request (headers\n"
                "and body, from its first byte) and for writing the answer;\n"
                "the connection is closed when missed (default 10s)",
                milliseconds(1), milliseconds(3600000));
  set->Duration("idle-timeout", &f->idle_timeout,
                "keep-alive connections idle longer are closed (default 60s)", milliseconds(1),
                milliseconds(3600000));
  set->String("log-level", &f->log_level,
              "debug|info|warn|error (default $SWITCHBOARD_LOG_LEVEL or info)")
      .Metavar("LEVEL");
}

}  // namespace

std::string Usage() {
  return flags::HelpFor<Flags>(kUsage, Register) +
         "Logs are JSON lines on stderr. SIGTERM or SIGINT stops it gracefully.\n";
}

Result<Flags> ParseFlags(const std::vector<std::string>& args) {
  auto parsed = flags::ParseInto<Flags>(kUsage, args, Register);
  if (!parsed.ok() || parsed->help) return parsed;
  if (parsed->tls_cert_file.empty() || parsed->tls_key_file.empty()) {
    return Status::InvalidArgument(
        "--tls-cert-file and --tls-key-file are required: the webhook serves HTTPS only");
  }
  return parsed;
}

}  // namespace switchboard::webhook_server
