// switchboard-webhook: flags, logging, the object cache, the HTTPS server,
// the optional plain-HTTP metrics port, and a graceful stop on SIGTERM.
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cluster_context.h"
#include "switchboard/common/log.h"
#include "switchboard/common/service_main.h"
#include "switchboard/common/signals.h"
#include "switchboard/kube/config.h"
#include "switchboard/kube/endpoints_server.h"
#include "switchboard/webhook_server/flags.h"
#include "switchboard/webhook_server/metrics.h"
#include "switchboard/webhook_server/server.h"

namespace sb = switchboard;
namespace slog = switchboard::log;

namespace {

// Each connection is a file descriptor; the default soft limit (often 1024)
// would make accept() fail before --max-connections is reached. Raise the
// soft limit towards the hard one; say so when even that is too low.
void RaiseOpenFilesLimit(int max_connections) {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return;
  rlim_t want = static_cast<rlim_t>(max_connections) + 64;  // + kube client, files, metrics
  if (lim.rlim_cur >= want) return;
  lim.rlim_cur = std::min(want, lim.rlim_max);
  setrlimit(RLIMIT_NOFILE, &lim);
  if (lim.rlim_cur < want) {
    slog::Warn(
        "webhook", "open-files limit below --max-connections; lower it or raise the limit",
        {{"limit", static_cast<uint64_t>(lim.rlim_cur)}, {"max_connections", max_connections}});
  }
}

}  // namespace

int main(int argc, char** argv) {
  auto flags = sb::webhook_server::ParseFlags(std::vector<std::string>(argv + 1, argv + argc));
  if (auto code = sb::service::Preamble("switchboard-webhook", flags, sb::webhook_server::Usage)) {
    return *code;
  }

  // Before any thread starts (they inherit the mask); the main thread
  // waits for the signal below. A client hanging up mid-response is not
  // fatal (SIGPIPE ignored).
  sb::signals::BlockStopSignals();

  auto config = sb::kube::Config::Load(flags->kubeconfig);
  if (!config.ok()) {
    slog::Error("webhook", "cannot load the cluster configuration",
                {{"error", config.status().message()}});
    return 1;
  }
  config->user_agent = "switchboard-webhook";
  auto client = sb::kube::Client::New(*config);
  if (!client.ok()) {
    slog::Error("webhook", "cannot create the Kubernetes client",
                {{"error", client.status().message()}});
    return 1;
  }
  auto context = std::make_unique<sb::webhook_server::ClusterContext>(client->get());

  sb::webhook_server::Metrics metrics;
  // Plain-HTTP /metrics, served as the operator serves its own.
  std::unique_ptr<sb::kube::EndpointsServer> metrics_server;
  if (flags->metrics_port != 0) {
    auto started = sb::kube::EndpointsServer::Start(
        {.host = flags->bind_address, .port = flags->metrics_port, .metrics = metrics.registry()});
    if (!started.ok()) {
      slog::Error("webhook", "cannot serve metrics; pick another --metrics-port or 0",
                  {{"error", started.status().message()}});
      return 1;
    }
    metrics_server = std::move(started).value();
  }

  sb::webhook_server::ServerOptions options;
  options.bind_address = flags->bind_address;
  options.port = flags->port;
  options.cert_file = flags->tls_cert_file;
  options.key_file = flags->tls_key_file;
  options.max_body_bytes = flags->max_body_bytes;
  options.worker_threads = flags->worker_threads;
  options.max_connections = flags->max_connections;
  options.request_timeout = flags->request_timeout;
  options.idle_timeout = flags->idle_timeout;
  RaiseOpenFilesLimit(flags->max_connections);
  auto server = sb::webhook_server::WebhookServer::Start(options, *context, metrics);
  if (!server.ok()) {
    slog::Error("webhook", "cannot start the HTTPS server", {{"error", server.status().message()}});
    return 1;
  }

  const int sig = sb::signals::WaitForStopSignal();
  slog::Info("webhook", "stopping", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
  (*server)->Stop();  // requests in flight finish first
  metrics_server.reset();
  context.reset();
  slog::Info("webhook", "stopped");
  return 0;
}
