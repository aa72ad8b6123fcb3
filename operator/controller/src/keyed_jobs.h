// Slow work off the reconcile workers, keyed by the object it is for: a
// reconcile submits a job and returns; when the job's outcome is final,
// `on_done(key)` enqueues the object again, and its reconcile reads the
// outcome with Latest. The operator's two kinds of slow work share it: the
// live probes of backends (ProbePool) and the authorizer checks of
// AuthCallout servers (AuthorizerChecks); what differs between them is
// only their `Work` (what one run does, and whether it asks to run again).
//
// The contract, the same for every kind of job:
// - At most one job per key is queued, running or waiting to run again.
// - A job carries the fingerprint (credentials, generation, server...) it
//   was taken for, and so does its outcome: a reconcile trusts only an
//   outcome that matches what it would submit now.
// - Submit with the fingerprint of the key's current job does nothing.
//   Another fingerprint replaces a queued or waiting job at once, and a
//   running one once it finishes (that run's outcome is still kept).
// - A run may ask to run again after an interval instead of being final: a
//   timer holds it, not a thread, and on_done is called only for the final
//   outcome.
// - Forget drops the key's outcome and any queued or waiting job; a running
//   job's outcome is discarded.
// - Stop joins the threads; waiting jobs are dropped. Thread-safe.
#pragma once

#include <algorithm>
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
#include <utility>
#include <vector>

namespace switchboard::operator_controller {

// Job and Outcome each have a `std::string fingerprint`.
template <typename Job, typename Outcome>
class KeyedJobs {
 public:
  // What one run of a job decided: its outcome, final unless `again_after`
  // asks for another run of the same job after that interval.
  struct Ran {
    Outcome outcome;
    std::optional<std::chrono::milliseconds> again_after;
  };
  using Work = std::function<Ran(const Job&)>;

  KeyedJobs(int threads, Work work, std::function<void(const std::string&)> on_done)
      : work_(std::move(work)), on_done_(std::move(on_done)) {
    for (int i = 0; i < std::max(1, threads); i++) threads_.emplace_back([this] { Run(); });
  }
  ~KeyedJobs() { Stop(); }
  KeyedJobs(const KeyedJobs&) = delete;
  KeyedJobs& operator=(const KeyedJobs&) = delete;

  void Submit(const std::string& key, Job job) {
    std::lock_guard lock(mu_);
    if (stop_) return;
    auto it = jobs_.find(key);
    if (it == jobs_.end()) {
      Entry& e = jobs_[key];
      e.job = std::move(job);
      QueueLocked(key, e);
      return;
    }
    Entry& e = it->second;
    if (e.state == State::kRunning) {
      if (e.forgotten || job.fingerprint != e.job.fingerprint) e.next = std::move(job);
      return;
    }
    if (job.fingerprint == e.job.fingerprint) return;
    // What it was for has changed: the new job runs now (a waiting run of
    // the old one is moot).
    const bool queued = e.state == State::kQueued;
    e.job = std::move(job);
    if (!queued) QueueLocked(key, e);
  }

  bool Busy(const std::string& key) const {  // queued, running or waiting
    std::lock_guard lock(mu_);
    return jobs_.count(key) > 0;
  }

  std::optional<Outcome> Latest(const std::string& key) const {
    std::lock_guard lock(mu_);
    auto it = latest_.find(key);
    if (it == latest_.end()) return std::nullopt;
    return it->second;
  }

  void Forget(const std::string& key) {
    std::lock_guard lock(mu_);
    latest_.erase(key);
    auto it = jobs_.find(key);
    if (it == jobs_.end()) return;
    Entry& e = it->second;
    if (e.state == State::kRunning) {
      e.forgotten = true;
      e.next.reset();
      return;
    }
    // A queued key left in queue_ is skipped when popped.
    if (e.state == State::kWaiting) timers_.erase({e.due, key});
    jobs_.erase(it);
  }

  void Stop() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
    std::lock_guard lock(mu_);
    timers_.clear();
    queue_.clear();
    jobs_.clear();
  }

 private:
  using SteadyTime = std::chrono::steady_clock::time_point;
  enum class State { kQueued, kRunning, kWaiting };
  struct Entry {
    Job job;
    State state = State::kQueued;
    SteadyTime due{};         // kWaiting
    std::optional<Job> next;  // submitted while running, with another fingerprint
    bool forgotten = false;   // Forget while running
  };

  void QueueLocked(const std::string& key, Entry& e) {
    if (e.state == State::kWaiting) timers_.erase({e.due, key});
    e.state = State::kQueued;
    queue_.push_back(key);
    cv_.notify_one();
  }

  void Run() {
    std::unique_lock lock(mu_);
    for (;;) {
      if (stop_) return;
      const auto now = std::chrono::steady_clock::now();
      while (!timers_.empty() && timers_.begin()->first <= now) {
        const std::string key = timers_.begin()->second;
        timers_.erase(timers_.begin());
        auto it = jobs_.find(key);
        if (it != jobs_.end() && it->second.state == State::kWaiting) {
          it->second.state = State::kQueued;
          queue_.push_back(key);
        }
      }
      if (queue_.empty()) {
        if (timers_.empty()) {
          cv_.wait(lock);
        } else {
          // A copy: another thread may erase that timer while this one waits.
          const SteadyTime due = timers_.begin()->first;
          cv_.wait_until(lock, due);
        }
        continue;
      }
      const std::string key = std::move(queue_.front());
      queue_.pop_front();
      auto it = jobs_.find(key);
      if (it == jobs_.end() || it->second.state != State::kQueued) continue;  // stale
      it->second.state = State::kRunning;
      const Job job = it->second.job;
      lock.unlock();

      Ran ran = work_(job);
      const SteadyTime finished = std::chrono::steady_clock::now();

      lock.lock();
      it = jobs_.find(key);  // only this thread erases a running entry
      Entry& e = it->second;
      if (e.next) {
        if (!e.forgotten) latest_.insert_or_assign(key, std::move(ran.outcome));
        e.job = std::move(*e.next);
        e.next.reset();
        e.forgotten = false;
        QueueLocked(key, e);
        continue;
      }
      if (e.forgotten) {
        jobs_.erase(it);
        continue;
      }
      if (ran.again_after && !stop_) {
        e.state = State::kWaiting;
        e.due = finished + *ran.again_after;
        timers_.emplace(e.due, key);
        // A thread asleep until a later timer, or with none, must see this one.
        cv_.notify_one();
        continue;
      }
      latest_.insert_or_assign(key, std::move(ran.outcome));
      jobs_.erase(it);
      if (stop_) return;
      lock.unlock();
      on_done_(key);
      lock.lock();
    }
  }

  const Work work_;
  const std::function<void(const std::string&)> on_done_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;                  // guarded by mu_
  std::map<std::string, Entry> jobs_;  // queued, running or waiting; guarded by mu_
  std::deque<std::string> queue_;      // keys to run; stale ones skipped; guarded by mu_
  std::set<std::pair<SteadyTime, std::string>> timers_;  // kWaiting keys by due; guarded by mu_
  std::map<std::string, Outcome> latest_;                // guarded by mu_
  std::vector<std::thread> threads_;                     // last: started after the rest
};

}  // namespace switchboard::operator_controller
