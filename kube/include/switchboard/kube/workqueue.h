// A work queue of keys for controllers (client-go's rate-limited
// workqueue): de-duplicates keys, never hands one key to two workers at
// once, delays requeues, and backs off per key.
//
//   Add(k)        queued once however often it is added before a worker
//                 takes it; added while k is being processed: queued again
//                 after Done(k)
//   Get()         blocks for the next key; nullopt once shut down and empty
//   Done(k)       a worker finished k (must follow every Get)
//   AddAfter(k,d) Add after d (an earlier pending time wins)
//   AddRateLimited(k) AddAfter(k, base * 2^failures(k)), capped; Forget(k)
//                 resets the count after a success
// Thread-safe. No background thread: waiting workers wake up for due delays.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

namespace switchboard::kube {

class WorkQueue {
 public:
  struct Options {
    std::chrono::milliseconds base_delay{5};
    std::chrono::milliseconds max_delay{std::chrono::seconds(300)};
  };
  WorkQueue();
  explicit WorkQueue(Options opts);

  void Add(const std::string& key);
  void AddAfter(const std::string& key, std::chrono::milliseconds delay);
  void AddRateLimited(const std::string& key);
  void Forget(const std::string& key);
  int NumRequeues(const std::string& key) const;
  // The delay AddRateLimited would use now (without recording a failure).
  std::chrono::milliseconds NextBackoff(const std::string& key) const;

  std::optional<std::string> Get();
  // Like Get but gives up after `timeout` (nullopt).
  std::optional<std::string> GetFor(std::chrono::milliseconds timeout);
  void Done(const std::string& key);

  // Wakes all workers; queued keys are still handed out, then Get returns
  // nullopt. Adds after shutdown are ignored; pending delays are dropped.
  void ShutDown();
  bool ShuttingDown() const;

  size_t Depth() const;         // keys ready to be taken (metrics)
  size_t DelayedCount() const;  // keys waiting for their delay
  size_t ProcessingCount() const;

 private:
  using Clock = std::chrono::steady_clock;
  void AddLocked(const std::string& key);
  void PromoteDueLocked(Clock::time_point now);

  Options opts_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;     // guarded by mu_
  std::set<std::string> dirty_;       // queued or to requeue after Done; guarded by mu_
  std::set<std::string> processing_;  // guarded by mu_
  std::map<std::string, Clock::time_point> delayed_;  // key -> due; guarded by mu_
  std::map<std::string, int> failures_;               // guarded by mu_
  bool shutting_down_ = false;                        // guarded by mu_
};

}  // namespace switchboard::kube
