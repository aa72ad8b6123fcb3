// The plain-HTTP endpoints a pod offers the kubelet and Prometheus:
// /healthz, /readyz and /metrics. The one way both binaries serve them
// (switchboard-operator on --health-addr and --metrics-addr,
// switchboard-webhook on --metrics-port), over cpp-httplib, with the metrics
// text from MetricsText (prometheus-cpp's TextSerializer). Served on a
// thread of its own; Stop() or the destructor joins it.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "switchboard/common/status.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace switchboard::kube {

// The Prometheus text exposition format (0.0.4) of every metric in
// `registry`: the body of GET /metrics, wherever it is served.
std::string MetricsText(const prometheus::Registry& registry);
inline constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4";

struct EndpointsOptions {
  std::string host;  // "" = all interfaces
  int port = 0;      // 0 picks a free port (see EndpointsServer::port)
  // Set: serves /healthz ("ok") and /readyz (200 when it returns "", else
  // 503 with the reason). Called on the server thread.
  std::function<std::string()> ready;
  // Set: serves /metrics.
  std::shared_ptr<prometheus::Registry> metrics;
};

class EndpointsServer {
 public:
  // Binds and starts serving. kUnavailable naming the address when it
  // cannot listen.
  static Result<std::unique_ptr<EndpointsServer>> Start(EndpointsOptions options);
  ~EndpointsServer();
  EndpointsServer(const EndpointsServer&) = delete;
  EndpointsServer& operator=(const EndpointsServer&) = delete;

  int port() const { return port_; }
  void Stop();

 private:
  struct Impl;
  explicit EndpointsServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  int port_ = -1;
};

}  // namespace switchboard::kube
