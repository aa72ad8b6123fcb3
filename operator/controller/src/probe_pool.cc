#include "probe_pool.h"

#include "switchboard/operator_logic/conditions.h"
#include "switchboard/operator_logic/time_util.h"

namespace switchboard::operator_controller {

ProbePool::ProbePool(int threads, std::function<void(const std::string&)> on_done,
                     std::function<void(const std::string&)> observe, Prober prober)
    : on_done_(std::move(on_done)), observe_(std::move(observe)), prober_(std::move(prober)) {
  for (int i = 0; i < std::max(1, threads); i++) threads_.emplace_back([this] { Run(); });
}

ProbePool::~ProbePool() { Stop(); }

void ProbePool::Stop() {
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

void ProbePool::QueueLocked(const std::string& key, Entry& e) {
  if (e.state == State::kWaiting) timers_.erase({e.due, key});
  e.state = State::kQueued;
  queue_.push_back(key);
  cv_.notify_one();
}

void ProbePool::Submit(const std::string& key, ProbeJob job) {
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
  // What it was for has changed: the new setup is probed now (a waiting
  // retry of the old one is moot).
  const bool queued = e.state == State::kQueued;
  e.job = std::move(job);
  if (!queued) QueueLocked(key, e);
}

bool ProbePool::Busy(const std::string& key) const {
  std::lock_guard lock(mu_);
  return jobs_.count(key) > 0;
}

std::optional<ProbeOutcome> ProbePool::Latest(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = latest_.find(key);
  if (it == latest_.end()) return std::nullopt;
  return it->second;
}

void ProbePool::Forget(const std::string& key) {
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

void ProbePool::Run() {
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
    const ProbeJob job = it->second.job;
    lock.unlock();

    ProbeOutcome out;
    out.fingerprint = job.fingerprint;
    auto r = prober_(job.primary);
    if (r.ok()) {
      out.max_payload = r->server_max_payload;
    } else {
      out.primary = r.status();
      const auto code = r.status().code();
      if (job.fallback && (code == StatusCode::kUnauthenticated ||
                           code == StatusCode::kPermissionDenied || code == StatusCode::kTimeout)) {
        auto f = prober_(*job.fallback);
        if (f.ok()) {
          out.fallback_ok = true;
          out.max_payload = f->server_max_payload;
        }
      }
    }
    if (observe_) {
      observe_(r.ok() ? std::string(operator_logic::reasons::kProbed)
                      : std::string(operator_logic::ProbeFailureReason(r.status().code(), false)));
    }
    out.at = std::chrono::steady_clock::now();
    std::optional<std::chrono::milliseconds> retry;
    if (!r.ok() && !out.fallback_ok && job.retry) {
      operator_logic::ProbeFailureFacts facts = *job.retry;
      facts.code = r.status().code();
      facts.probe_message = r.status().message();
      facts.user_waiting = std::max(
          std::chrono::milliseconds(0),
          std::chrono::duration_cast<std::chrono::milliseconds>(out.at - job.credentials_since));
      retry = operator_logic::DecideProbeRetry(facts);
    }
    out.time = operator_logic::FormatTime(operator_logic::Clock::now());

    lock.lock();
    it = jobs_.find(key);  // only this thread erases a running entry
    Entry& e = it->second;
    if (e.next) {
      if (!e.forgotten) latest_[key] = std::move(out);
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
    if (retry && !stop_) {
      e.state = State::kWaiting;
      e.due = out.at + *retry;
      timers_.emplace(e.due, key);
      // A thread asleep until a later timer, or with none, must see this one.
      cv_.notify_one();
      continue;
    }
    latest_[key] = std::move(out);
    jobs_.erase(it);
    if (stop_) return;
    lock.unlock();
    on_done_(key);
    lock.lock();
  }
}

}  // namespace switchboard::operator_controller
