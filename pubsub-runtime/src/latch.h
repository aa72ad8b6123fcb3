// A one-shot latch: set once, waited on until set.
#pragma once

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
  void Wait() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return set_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool set_ = false;  // guarded by mu_
};

}  // namespace switchboard::pubsub::internal
