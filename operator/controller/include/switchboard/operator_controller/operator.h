// The switchboard-operator process: wires the API client, informers,
// the two controllers, events, metrics, health and leader election.
//
// Lifecycle (Run):
//   serve /healthz, /readyz, /metrics
//   [--leader-elect] wait for the Lease (standby until then; /readyz is OK)
//   start informers; wait for their initial lists; start the workers
//   run until Stop() (SIGTERM): drain workers, stop watches, release the Lease
// Losing the Lease (renewals failing past --renew-deadline) ends Run with
// an error so the process exits and restarts as a clean standby.
#pragma once

#include <atomic>
#include <memory>

#include "switchboard/common/status.h"
#include "switchboard/operator_controller/options.h"

namespace switchboard::operator_controller {

class Operator {
 public:
  explicit Operator(Options options);
  ~Operator();
  Operator(const Operator&) = delete;
  Operator& operator=(const Operator&) = delete;

  // Blocks until Stop() or a fatal error (lost leadership, no API config).
  Status Run();
  // Thread- and async-signal-safe (sets a flag and wakes Run). Idempotent.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace switchboard::operator_controller
