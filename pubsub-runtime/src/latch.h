// A one-shot latch: set once, waited on with a deadline.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace switchboard::pubsub::internal {

class Latch {
 public:
  void Set() {
    std::lock_guard lock(mu_);
    set_ = true;
    cv_.notify_all();
  }
  bool Wait(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return set_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool set_ = false;  // guarded by mu_
};

}  // namespace switchboard::pubsub::internal
