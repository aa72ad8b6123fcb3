// The parts operator.cc wires: the housekeeping schedule, readiness, and
// where the Lease lives.
#include <gtest/gtest.h>

#include <cstdlib>

#include "operator_health.h"
#include "operator_housekeeping.h"
#include "operator_leader.h"

namespace {

using namespace switchboard::operator_controller;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = HousekeepingSchedule::Clock;

TEST(HousekeepingSchedule, TrimEveryFiveSecondsResyncOnItsPeriod) {
  const Clock::time_point t0{};
  HousekeepingSchedule s(t0, seconds(12));
  struct Step {
    milliseconds at;
    bool trim, resync;
  };
  const std::vector<Step> steps = {
      {milliseconds(500), false, false},   {milliseconds(5000), false, false},
      {milliseconds(5500), true, false},   {milliseconds(6000), false, false},
      {milliseconds(10500), false, false}, {milliseconds(11000), true, false},
      {milliseconds(12500), false, true},  {milliseconds(13000), false, false},
  };
  for (const auto& st : steps) {
    auto due = s.At(t0 + st.at);
    EXPECT_EQ(due.trim, st.trim) << st.at.count();
    EXPECT_EQ(due.resync, st.resync) << st.at.count();
  }
}

TEST(HousekeepingSchedule, NoResyncWhenOff) {
  const Clock::time_point t0{};
  HousekeepingSchedule s(t0, milliseconds(0));
  EXPECT_FALSE(s.At(t0 + std::chrono::hours(1)).resync);
}

TEST(Housekeeping, RunsTheGaugesEveryTickAndStopsWhenWaitSaysSo) {
  const Clock::time_point t0 = Clock::now();
  HousekeepingSchedule s(t0, milliseconds(0));
  int gauges = 0, waits = 0, resyncs = 0;
  RunHousekeeping(s, {.trim = nullptr, .gauges = [&] { ++gauges; }, .resync = [&] { ++resyncs; }},
                  [&](milliseconds d) {
                    EXPECT_EQ(d, HousekeepingSchedule::kTick);
                    return ++waits <= 3;
                  });
  EXPECT_EQ(waits, 4);
  EXPECT_EQ(gauges, 3);
  EXPECT_EQ(resyncs, 0);
}

TEST(Readiness, StandbyIsReadyLeaderOnlyOnceSynced) {
  EXPECT_EQ(ReadinessProblem(nullptr, false), "caches not synced");
  EXPECT_EQ(ReadinessProblem(nullptr, true), "");
}

TEST(Leadership, LeaseNamespaceAndIdentity) {
  Options o;
  o.lease_namespace = "ops";
  EXPECT_EQ(LeaseNamespace(o, "kc"), "ops");
  o.lease_namespace.clear();
  ::setenv("POD_NAMESPACE", "pod-ns", 1);
  EXPECT_EQ(LeaseNamespace(o, "kc"), "pod-ns");
  ::unsetenv("POD_NAMESPACE");
  EXPECT_EQ(LeaseNamespace(o, "kc"), "kc");
  o.identity = "me";
  EXPECT_EQ(LeaseIdentity(o), "me");
  o.identity.clear();
  EXPECT_NE(LeaseIdentity(o).find('_'), std::string::npos);
}

TEST(Leadership, WithoutLeaderElectLeadsAtOnce) {
  Options o;
  o.leader_elect = false;
  Leadership l(o, nullptr, "default");
  EXPECT_EQ(l.elector(), nullptr);
  EXPECT_TRUE(l.Acquire([] {}));
  l.Release();
  EXPECT_FALSE(l.lost());
}

}  // namespace
