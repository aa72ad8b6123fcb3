// One of the two translation units that include httplib.h (the other is
// transport_httplib.cc); both get the same pkg-config defines.
#include "switchboard/kube/endpoints_server.h"

#include <httplib.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <thread>

namespace switchboard::kube {

std::string MetricsText(const prometheus::Registry& registry) {
  return prometheus::TextSerializer().Serialize(registry.Collect());
}

struct EndpointsServer::Impl {
  EndpointsOptions options;
  httplib::Server server;
  std::thread thread;
};

Result<std::unique_ptr<EndpointsServer>> EndpointsServer::Start(EndpointsOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  const EndpointsOptions& o = impl->options;
  if (o.ready) {
    impl->server.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("ok\n", "text/plain");
    });
    impl->server.Get("/readyz", [&o](const httplib::Request&, httplib::Response& res) {
      std::string why = o.ready();
      if (why.empty()) {
        res.set_content("ok\n", "text/plain");
      } else {
        res.status = 503;
        res.set_content("not ready: " + why + "\n", "text/plain");
      }
    });
  }
  if (o.metrics) {
    impl->server.Get("/metrics", [&o](const httplib::Request&, httplib::Response& res) {
      res.set_content(MetricsText(*o.metrics), std::string(kMetricsContentType));
    });
  }
  std::string host = o.host.empty() ? "0.0.0.0" : o.host;
  int port = o.port;
  if (port == 0) {
    port = impl->server.bind_to_any_port(host);
    if (port < 0) return Status::Unavailable("cannot listen on " + host + ":0");
  } else if (!impl->server.bind_to_port(host, port)) {
    return Status::Unavailable("cannot listen on " + host + ":" + std::to_string(port) +
                               "; is the port in use?");
  }
  Impl* raw = impl.get();
  raw->thread = std::thread([raw] { raw->server.listen_after_bind(); });
  std::unique_ptr<EndpointsServer> out(new EndpointsServer(std::move(impl)));
  out->port_ = port;
  return out;
}

EndpointsServer::EndpointsServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

EndpointsServer::~EndpointsServer() { Stop(); }

void EndpointsServer::Stop() {
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace switchboard::kube
