// /healthz and /readyz on --health-addr, served by kube::EndpointsServer
// (the plain-HTTP endpoints both binaries share). Neither touches NATS or
// the API server: liveness is "the process serves HTTP", readiness is
// whatever `ready` says (the operator: caches synced, or standing by for
// leadership). Served on its own thread; Stop() or the destructor joins it.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "switchboard/common/status.h"
#include "switchboard/kube/endpoints_server.h"

namespace switchboard::operator_controller {

class HealthServer {
 public:
  // `ready` is called on the server thread; it returns "" when ready or the
  // reason it is not (shown in the 503 body).
  explicit HealthServer(std::function<std::string()> ready);
  ~HealthServer();
  HealthServer(const HealthServer&) = delete;
  HealthServer& operator=(const HealthServer&) = delete;

  // Binds `addr` (see ParseHostPort; port 0 picks a free one) and starts
  // serving. A disabled address ("0") is OK and serves nothing.
  Status Start(const std::string& addr);
  int port() const;  // -1 until started, and when disabled
  void Stop();

 private:
  std::function<std::string()> ready_;
  std::unique_ptr<kube::EndpointsServer> server_;
};

}  // namespace switchboard::operator_controller
