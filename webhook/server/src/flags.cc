#include "switchboard/webhook_server/flags.h"

#include <charconv>
#include <cstdlib>
#include <limits>
#include <string_view>

#include "switchboard/api/duration.h"

namespace switchboard::webhook_server {
namespace {

bool ParseInt(std::string_view text, long long min, long long max, long long* out) {
  long long v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max) return false;
  *out = v;
  return true;
}

}  // namespace

std::string Usage() {
  return R"(switchboard-webhook: validating and defaulting admission webhook for
pubsub.switchboard.dev PubSubBackend and NatsServer (HTTPS only, TLS 1.2+).

Usage: switchboard-webhook --tls-cert-file FILE --tls-key-file FILE [flags]

Paths on --port (HTTPS): POST /validate, POST /mutate, GET /healthz,
GET /readyz (ready once the object cache has synced), GET /metrics.

Flags:
  --tls-cert-file FILE   PEM serving certificate (chain first); reloaded when it changes
  --tls-key-file FILE    PEM private key; reloaded when it changes
  --port N               HTTPS port (default 9443)
  --bind-address ADDR    address to listen on (default 0.0.0.0)
  --metrics-port N       plain-HTTP port for /metrics, 0 to turn off (default 8080)
  --kubeconfig FILE      cluster to watch for existing objects (default $KUBECONFIG,
                         else the in-cluster service account)
  --max-body-bytes N     largest request body accepted; larger gets 413 (default 4194304)
  --worker-threads N     threads serving connections, 0 for one per CPU up to 16 (default 0);
                         connections do not take a thread each
  --max-connections N    open HTTPS connections at most; at the limit the one idle the
                         longest is closed to make room (default 1024)
  --request-timeout D    deadline for a TLS handshake, for a whole request (headers and
                         body, from its first byte) and for writing the answer; the
                         connection is closed when missed (default 10s)
  --idle-timeout D       keep-alive connections idle longer are closed (default 60s)
  --log-level LEVEL      debug|info|warn|error (default $SWITCHBOARD_LOG_LEVEL or info)
  --help                 this text

Durations are Go-style: 500ms, 10s, 1m.
Logs are JSON lines on stderr. SIGTERM or SIGINT stops it gracefully.
)";
}

Result<Flags> ParseFlags(const std::vector<std::string>& args) {
  Flags f;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg == "--help" || arg == "-h") {
      f.help = true;
      return f;
    }
    if (arg.rfind("--", 0) != 0) {
      return Status::InvalidArgument("unexpected argument \"" + arg + "\"; see --help");
    }
    std::string name = arg;
    std::string value;
    bool has_value = false;
    if (auto eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    auto need_value = [&]() -> Status {
      if (has_value) return Status::Ok();
      if (i + 1 >= args.size()) return Status::InvalidArgument(name + " needs a value; see --help");
      value = args[++i];
      return Status::Ok();
    };
    auto port = [&](int* out, int min) -> Status {
      SB_RETURN_IF_ERROR(need_value());
      long long v = 0;
      if (!ParseInt(value, min, 65535, &v)) {
        return Status::InvalidArgument(name + " must be a port number " + std::to_string(min) +
                                       "-65535, got \"" + value + "\"");
      }
      *out = static_cast<int>(v);
      return Status::Ok();
    };
    auto duration = [&](std::chrono::milliseconds* out) -> Status {
      SB_RETURN_IF_ERROR(need_value());
      auto ns = api::ParseDuration(value);
      if (!ns.ok() || *ns < 1000000 || *ns > 3600LL * 1000000000) {
        return Status::InvalidArgument(
            name + " must be a duration from 1ms to 1h such as 10s, got \"" + value + "\"");
      }
      *out = std::chrono::milliseconds(*ns / 1000000);
      return Status::Ok();
    };
    if (name == "--tls-cert-file") {
      SB_RETURN_IF_ERROR(need_value());
      f.tls_cert_file = value;
    } else if (name == "--tls-key-file") {
      SB_RETURN_IF_ERROR(need_value());
      f.tls_key_file = value;
    } else if (name == "--bind-address") {
      SB_RETURN_IF_ERROR(need_value());
      f.bind_address = value;
    } else if (name == "--kubeconfig") {
      SB_RETURN_IF_ERROR(need_value());
      f.kubeconfig = value;
    } else if (name == "--log-level") {
      SB_RETURN_IF_ERROR(need_value());
      f.log_level = value;
    } else if (name == "--port") {
      SB_RETURN_IF_ERROR(port(&f.port, 0));
    } else if (name == "--metrics-port") {
      SB_RETURN_IF_ERROR(port(&f.metrics_port, 0));
    } else if (name == "--max-body-bytes") {
      SB_RETURN_IF_ERROR(need_value());
      long long v = 0;
      if (!ParseInt(value, 1024, std::numeric_limits<int32_t>::max(), &v)) {
        return Status::InvalidArgument(
            "--max-body-bytes must be a byte count of at least 1024, got \"" + value + "\"");
      }
      f.max_body_bytes = static_cast<size_t>(v);
    } else if (name == "--worker-threads") {
      SB_RETURN_IF_ERROR(need_value());
      long long v = 0;
      if (!ParseInt(value, 0, 1024, &v)) {
        return Status::InvalidArgument("--worker-threads must be 0-1024, got \"" + value + "\"");
      }
      f.worker_threads = static_cast<int>(v);
    } else if (name == "--max-connections") {
      SB_RETURN_IF_ERROR(need_value());
      long long v = 0;
      if (!ParseInt(value, 1, 1000000, &v)) {
        return Status::InvalidArgument("--max-connections must be 1-1000000, got \"" + value +
                                       "\"");
      }
      f.max_connections = static_cast<int>(v);
    } else if (name == "--request-timeout") {
      SB_RETURN_IF_ERROR(duration(&f.request_timeout));
    } else if (name == "--idle-timeout") {
      SB_RETURN_IF_ERROR(duration(&f.idle_timeout));
    } else {
      return Status::InvalidArgument("unknown flag " + name + "; see --help");
    }
  }
  if (f.tls_cert_file.empty() || f.tls_key_file.empty()) {
    return Status::InvalidArgument(
        "--tls-cert-file and --tls-key-file are required: the webhook serves HTTPS only");
  }
  return f;
}

}  // namespace switchboard::webhook_server
