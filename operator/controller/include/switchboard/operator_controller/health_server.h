// /healthz and /readyz on a plain HTTP port (cpp-httplib). Neither touches
// NATS or the API server: liveness is "the process serves HTTP", readiness is
// whatever `ready` says (the operator: caches synced, or standing by for
// leadership). Served on its own thread; Stop() or the destructor joins it.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "switchboard/common/status.h"

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
  int port() const { return port_; }
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = -1;
};

}  // namespace switchboard::operator_controller
