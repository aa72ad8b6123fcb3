#include "operator_housekeeping.h"

#include <malloc.h>

namespace switchboard::operator_controller {

HousekeepingSchedule::HousekeepingSchedule(Clock::time_point start,
                                           std::chrono::milliseconds resync_every)
    : resync_every_(resync_every), last_trim_(start), last_resync_(start) {}

HousekeepingSchedule::Due HousekeepingSchedule::At(Clock::time_point now) {
  Due due;
  if (now - last_trim_ > kTrimEvery) {
    due.trim = true;
    last_trim_ = now;
  }
  if (resync_every_.count() > 0 && now - last_resync_ > resync_every_) {
    due.resync = true;
    last_resync_ = now;
  }
  return due;
}

void RunHousekeeping(HousekeepingSchedule& schedule, const HousekeepingChores& chores,
                     const std::function<bool(std::chrono::milliseconds)>& wait) {
  while (wait(HousekeepingSchedule::kTick)) {
    HousekeepingSchedule::Due due = schedule.At(HousekeepingSchedule::Clock::now());
    if (due.trim && chores.trim) chores.trim();
    if (chores.gauges) chores.gauges();
    if (due.resync && chores.resync) chores.resync();
  }
}

void TrimHeap() { malloc_trim(0); }

}  // namespace switchboard::operator_controller
