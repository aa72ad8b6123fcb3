#include "switchboard/operator_controller/health_server.h"

#include <httplib.h>

#include <thread>

#include "switchboard/operator_controller/options.h"

namespace switchboard::operator_controller {

struct HealthServer::Impl {
  std::function<std::string()> ready;
  httplib::Server server;
  std::thread thread;
};

HealthServer::HealthServer(std::function<std::string()> ready) : impl_(new Impl) {
  impl_->ready = std::move(ready);
  impl_->server.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  impl_->server.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
    std::string why = impl_->ready ? impl_->ready() : std::string();
    if (why.empty()) {
      res.set_content("ok\n", "text/plain");
    } else {
      res.status = 503;
      res.set_content("not ready: " + why + "\n", "text/plain");
    }
  });
}

HealthServer::~HealthServer() { Stop(); }

Status HealthServer::Start(const std::string& addr) {
  auto hp = ParseHostPort(addr);
  if (!hp.ok()) return hp.status();
  if (hp->port < 0) return Status::Ok();
  std::string host = hp->host.empty() ? "0.0.0.0" : hp->host;
  if (hp->port == 0) {
    port_ = impl_->server.bind_to_any_port(host);
    if (port_ < 0) return Status::Unavailable("health: cannot listen on " + host);
  } else {
    if (!impl_->server.bind_to_port(host, hp->port)) {
      return Status::Unavailable("health: cannot listen on " + host + ":" +
                                 std::to_string(hp->port) + "; is the port in use?");
    }
    port_ = hp->port;
  }
  impl_->thread = std::thread([this] { impl_->server.listen_after_bind(); });
  return Status::Ok();
}

void HealthServer::Stop() {
  if (!impl_) return;
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace switchboard::operator_controller
