#include "switchboard/kube/workqueue.h"

#include <algorithm>
#include <cmath>

namespace switchboard::kube {

WorkQueue::WorkQueue() : WorkQueue(Options{}) {}
WorkQueue::WorkQueue(Options opts) : opts_(opts) {}

void WorkQueue::AddLocked(const std::string& key) {
  if (shutting_down_) return;
  if (dirty_.count(key) != 0) return;  // already queued (or requeue pending)
  dirty_.insert(key);
  delayed_.erase(key);                      // an immediate add supersedes a pending delay
  if (processing_.count(key) != 0) return;  // queued again by Done()
  queue_.push_back(key);
  cv_.notify_one();
}

void WorkQueue::Add(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  AddLocked(key);
}

void WorkQueue::AddAfter(const std::string& key, std::chrono::milliseconds delay) {
  std::lock_guard<std::mutex> lock(mu_);
  if (shutting_down_) return;
  if (delay.count() <= 0) {
    AddLocked(key);
    return;
  }
  if (dirty_.count(key) != 0) return;  // will run soon anyway
  auto due = Clock::now() + delay;
  auto it = delayed_.find(key);
  if (it == delayed_.end() || due < it->second) delayed_[key] = due;
  cv_.notify_all();  // a waiting worker may need an earlier wake-up
}

std::chrono::milliseconds WorkQueue::NextBackoff(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = failures_.find(key);
  int n = it == failures_.end() ? 0 : it->second;
  // base * 2^n, capped; computed in double to avoid overflow.
  double d = static_cast<double>(opts_.base_delay.count()) * std::pow(2.0, std::min(n, 62));
  double cap = static_cast<double>(opts_.max_delay.count());
  return std::chrono::milliseconds(static_cast<int64_t>(std::min(d, cap)));
}

void WorkQueue::AddRateLimited(const std::string& key) {
  auto delay = NextBackoff(key);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++failures_[key];
  }
  AddAfter(key, delay);
}

void WorkQueue::Forget(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  failures_.erase(key);
}

int WorkQueue::NumRequeues(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

void WorkQueue::PromoteDueLocked(Clock::time_point now) {
  for (auto it = delayed_.begin(); it != delayed_.end();) {
    if (it->second <= now) {
      std::string key = it->first;
      it = delayed_.erase(it);
      AddLocked(key);
    } else {
      ++it;
    }
  }
}

std::optional<std::string> WorkQueue::Get() { return GetFor(std::chrono::milliseconds::max()); }

std::optional<std::string> WorkQueue::GetFor(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  const bool forever = timeout == std::chrono::milliseconds::max();
  const auto deadline = forever ? Clock::time_point::max() : Clock::now() + timeout;
  while (true) {
    PromoteDueLocked(Clock::now());
    if (!queue_.empty()) {
      std::string key = std::move(queue_.front());
      queue_.pop_front();
      dirty_.erase(key);
      processing_.insert(key);
      return key;
    }
    if (shutting_down_) return std::nullopt;
    auto wake = deadline;
    for (const auto& [k, due] : delayed_) wake = std::min(wake, due);
    if (wake == Clock::time_point::max()) {
      cv_.wait(lock);
    } else {
      if (cv_.wait_until(lock, wake) == std::cv_status::timeout && !forever &&
          Clock::now() >= deadline) {
        PromoteDueLocked(Clock::now());
        if (queue_.empty()) return std::nullopt;
      }
    }
  }
}

void WorkQueue::Done(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  processing_.erase(key);
  if (dirty_.count(key) != 0) {  // re-added while it was being processed
    queue_.push_back(key);
    cv_.notify_one();
  } else if (shutting_down_ && processing_.empty()) {
    cv_.notify_all();
  }
}

void WorkQueue::ShutDown() {
  std::lock_guard<std::mutex> lock(mu_);
  shutting_down_ = true;
  delayed_.clear();
  cv_.notify_all();
}

bool WorkQueue::ShuttingDown() const {
  std::lock_guard<std::mutex> lock(mu_);
  return shutting_down_;
}

size_t WorkQueue::Depth() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t due = 0;
  auto now = Clock::now();
  for (const auto& [k, t] : delayed_) {
    if (t <= now && dirty_.count(k) == 0) ++due;
  }
  return queue_.size() + due;
}

size_t WorkQueue::DelayedCount() const {
  std::lock_guard<std::mutex> lock(mu_);
  return delayed_.size();
}

size_t WorkQueue::ProcessingCount() const {
  std::lock_guard<std::mutex> lock(mu_);
  return processing_.size();
}

}  // namespace switchboard::kube
