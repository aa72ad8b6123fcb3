// Waiting on a condition with a deadline: the only synchronisation tests use.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace switchboard::testing {

// Polls `condition` every `interval` until it is true or `timeout` passes.
// Returns the condition's final value.
inline bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
                    std::chrono::milliseconds interval = std::chrono::milliseconds(20)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(interval);
  }
}

}  // namespace switchboard::testing
