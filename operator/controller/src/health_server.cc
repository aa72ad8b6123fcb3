#include "switchboard/operator_controller/health_server.h"

#include "switchboard/operator_controller/options.h"

namespace switchboard::operator_controller {

HealthServer::HealthServer(std::function<std::string()> ready) : ready_(std::move(ready)) {}

HealthServer::~HealthServer() { Stop(); }

Status HealthServer::Start(const std::string& addr) {
  auto hp = ParseHostPort(addr);
  if (!hp.ok()) return hp.status();
  if (hp->port < 0) return Status::Ok();
  auto ready = ready_;
  auto server = kube::EndpointsServer::Start(
      {.host = hp->host, .port = hp->port, .ready = [ready]() -> std::string {
         return ready ? ready() : std::string();
       }});
  if (!server.ok()) return server.status().Annotate("health");
  server_ = std::move(server).value();
  return Status::Ok();
}

int HealthServer::port() const { return server_ ? server_->port() : -1; }

void HealthServer::Stop() {
  if (server_) server_->Stop();
}

}  // namespace switchboard::operator_controller
