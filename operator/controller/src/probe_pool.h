// Live probes (pubsub::Probe) on a bounded pool of their own threads, off
// the reconcile workers: a probe waits up to --probe-timeout for a server,
// and a worker blocked on it would stall every other backend. A reconcile
// submits a probe and returns; when it finishes, `on_done(key)` enqueues the
// backend again, which then reads the result.
//
// At most one probe per key is queued, running or waiting to be retried;
// results are kept per key with the fingerprint (credentials, generation,
// server) they were taken for, so a reconcile only trusts a result that
// matches what it would probe now. A job with `retry` facts (AuthCallout)
// whose probe is refused while operator_logic::DecideProbeRetry says the
// authorizers may still be catching up is probed again by the pool after
// that interval, on a timer (no thread waits meanwhile), and on_done is
// called only for the final outcome: under a create burst a backend goes
// through the controller's work queue once for its probe instead of once
// per refusal. A Submit with another fingerprint replaces a queued or
// waiting job; Forget drops the key's outcome and any queued or waiting
// job. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

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
  // AuthCallout: the facts DecideProbeRetry judges a refusal on (the pool
  // fills in the code, the message and the credentials' age at the
  // refusal, counted from `credentials_since`). nullopt: no retry in the pool.
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

class ProbePool {
 public:
  using Prober = std::function<Result<pubsub::ProbeReport>(const pubsub::ProbeOptions&)>;
  // `observe` (may be empty) gets each finished probe's result label for
  // switchboard_probe_total.
  ProbePool(int threads, std::function<void(const std::string&)> on_done,
            std::function<void(const std::string&)> observe = {}, Prober prober = pubsub::Probe);
  ~ProbePool();  // Stop()
  ProbePool(const ProbePool&) = delete;
  ProbePool& operator=(const ProbePool&) = delete;

  // Queues a probe for `key` unless one with the same fingerprint is
  // queued, running or waiting for its retry. Another fingerprint replaces
  // a queued or waiting job at once, and a running one once it finishes.
  void Submit(const std::string& key, ProbeJob job);
  bool Busy(const std::string& key) const;  // queued, running or waiting
  std::optional<ProbeOutcome> Latest(const std::string& key) const;
  // Drops the outcome and any queued or waiting job; a running probe's
  // result is discarded.
  void Forget(const std::string& key);
  void Stop();  // joins the threads; pending retries are dropped

 private:
  using SteadyTime = std::chrono::steady_clock::time_point;
  enum class State { kQueued, kRunning, kWaiting };
  struct Entry {
    ProbeJob job;
    State state = State::kQueued;
    SteadyTime due{};              // kWaiting
    std::optional<ProbeJob> next;  // submitted while running, with another fingerprint
    bool forgotten = false;        // Forget while running
  };
  void Run();
  void QueueLocked(const std::string& key, Entry& e);

  std::function<void(const std::string&)> on_done_;
  std::function<void(const std::string&)> observe_;
  Prober prober_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;                  // guarded by mu_
  std::map<std::string, Entry> jobs_;  // queued, running or waiting; guarded by mu_
  std::deque<std::string> queue_;      // keys to run; stale ones skipped; guarded by mu_
  std::set<std::pair<SteadyTime, std::string>> timers_;  // kWaiting keys by due; guarded by mu_
  std::map<std::string, ProbeOutcome> latest_;           // guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace switchboard::operator_controller
