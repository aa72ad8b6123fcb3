// Live probes (pubsub::Probe) on a bounded pool of their own threads, off
// the reconcile workers: a probe waits up to --probe-timeout for a server,
// and a worker blocked on it would stall every other backend. A reconcile
// submits a probe and returns; when it finishes, `on_done(key)` enqueues the
// backend again, which then reads the result.
//
// At most one probe per key is queued or running; results are kept per key
// with the fingerprint (credentials, generation, server) they were taken
// for, so a reconcile only trusts a result that matches what it would probe
// now. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "switchboard/common/status.h"
#include "switchboard/pubsub/probe.h"

namespace switchboard::operator_controller {

struct ProbeJob {
  std::string fingerprint;
  pubsub::ProbeOptions primary;
  // Tried when `primary` fails with a refusal or a timeout (a Staged
  // rotation: the new user may not be loaded yet; engines use these).
  std::optional<pubsub::ProbeOptions> fallback;
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

  // Queues a probe for `key` unless one is queued or running.
  void Submit(const std::string& key, ProbeJob job);
  bool Busy(const std::string& key) const;
  std::optional<ProbeOutcome> Latest(const std::string& key) const;
  void Forget(const std::string& key);
  void Stop();

 private:
  void Run();

  std::function<void(const std::string&)> on_done_;
  std::function<void(const std::string&)> observe_;
  Prober prober_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;                                   // guarded by mu_
  std::deque<std::pair<std::string, ProbeJob>> queue_;  // guarded by mu_
  std::map<std::string, bool> busy_;                    // queued or running; guarded by mu_
  std::map<std::string, ProbeOutcome> latest_;          // guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace switchboard::operator_controller
