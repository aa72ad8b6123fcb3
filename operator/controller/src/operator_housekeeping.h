// The operator's periodic chores, on Run's own thread after the workers
// started: the queue-depth gauges, the resync (--resync-period), and
// handing memory back. A burst (1,000 new backends, a relist) frees far
// more than the caches keep, scattered over glibc's arenas, and glibc
// returns little of it to the kernel by itself; the bytes of recent Secret
// creates (RecentWrites) need pruning because after a burst no create may
// follow to prune them.
#pragma once

#include <chrono>
#include <functional>

namespace switchboard::operator_controller {

// When each chore is due: a pure schedule over a steady clock.
class HousekeepingSchedule {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kTick{500};
  static constexpr std::chrono::seconds kTrimEvery{5};

  // `resync_every` 0: never.
  HousekeepingSchedule(Clock::time_point start, std::chrono::milliseconds resync_every);

  struct Due {
    bool trim = false;    // RecentWrites::Prune, malloc_trim
    bool resync = false;  // enqueue every object
  };
  // What is due at `now`; what it returns counts as done then. The gauges
  // are due on every tick.
  Due At(Clock::time_point now);

 private:
  std::chrono::milliseconds resync_every_;
  Clock::time_point last_trim_, last_resync_;
};

struct HousekeepingChores {
  std::function<void()> trim;
  std::function<void()> gauges;
  std::function<void()> resync;
};

// Runs the chores on the schedule until `wait(kTick)` returns false (a stop
// was requested).
void RunHousekeeping(HousekeepingSchedule& schedule, const HousekeepingChores& chores,
                     const std::function<bool(std::chrono::milliseconds)>& wait);

// Gives the heap's free pages back to the kernel (malloc_trim).
void TrimHeap();

}  // namespace switchboard::operator_controller
