// Live probes (pubsub::Probe) on a bounded pool of their own threads, off
// the reconcile workers: a probe waits up to --probe-timeout for a server,
// and a worker blocked on it would stall every other backend. The pool is
// a KeyedJobs (keyed_jobs.h: one job per key, fingerprints, Forget, Stop);
// what is its own is the run: the fallback credentials of a Staged
// rotation, and for a job with `retry` facts a refusal that
// operator_logic::DecideProbeRetry says the authorizers may still be
// catching up on is probed again by the pool after that interval, so under
// a create burst a backend goes through the controller's work queue once
// for its probe instead of once per refusal.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "keyed_jobs.h"
#include "switchboard/common/status.h"
#include "switchboard/operator_logic/backend_policy.h"
#include "switchboard/pubsub/probe.h"

namespace switchboard::operator_controller {

struct ProbeJob {
  std::string fingerprint;
  pubsub::ProbeOptions primary;
  // Tried when `primary` fails with a refusal or a timeout (a Staged
  // rotation: the new user may not be loaded yet; engines use these).
  std::optional<pubsub::ProbeOptions> fallback;
  // The facts DecideProbeRetry judges a refusal on (it retries only through
  // the authorizers; the pool fills in the code, the message and the
  // credentials' age at the refusal, counted from `credentials_since`).
  // nullopt: no retry in the pool.
  std::optional<operator_logic::ProbeFailureFacts> retry;
  std::chrono::steady_clock::time_point credentials_since{};
};

struct ProbeOutcome {
  std::string fingerprint;
  Status primary;  // Ok when the primary probe passed
  bool fallback_ok = false;
  int64_t max_payload = 0;
  std::string time;  // RFC 3339, when it finished
  std::chrono::steady_clock::time_point at;
};

// The probes' KeyedJobs: a run probes the primary, then the fallback for a
// refusal or a timeout, and asks to run again when DecideProbeRetry says
// the authorizers may still be catching up.
class ProbePool : public KeyedJobs<ProbeJob, ProbeOutcome> {
 public:
  using Prober = std::function<Result<pubsub::ProbeReport>(const pubsub::ProbeOptions&)>;
  // `observe` (may be empty) gets each finished probe's result label for
  // switchboard_probe_total.
  ProbePool(int threads, std::function<void(const std::string&)> on_done,
            std::function<void(const std::string&)> observe = {}, Prober prober = pubsub::Probe);
};

// One run of a probe job (ProbePool's Work), exposed for its table test.
KeyedJobs<ProbeJob, ProbeOutcome>::Ran RunProbeJob(
    const ProbeJob& job, const ProbePool::Prober& prober,
    const std::function<void(const std::string&)>& observe);

}  // namespace switchboard::operator_controller
