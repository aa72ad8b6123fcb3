// The election's decisions against an in-memory Lease store. The store is a
// fake on purpose: it lets a test expire a lease or fail a renewal at an exact
// moment, which a real API server cannot be told to do. The real-server path
// is covered by the e2e test (operator_e2e_test: standby replica).
#include "switchboard/operator_controller/leader_election.h"

#include <gtest/gtest.h>

#include <mutex>
#include <thread>

#include "switchboard/testing/wait.h"

namespace switchboard::operator_controller {
namespace {

using namespace std::chrono_literals;

// Shared between candidates, like the API server's Lease: resourceVersion
// checks give optimistic concurrency.
struct FakeLease {
  std::mutex mu;
  std::optional<LeaseRecord> lease;
  int version = 0;
  bool fail = false;  // every call fails (API server unreachable)
};

class FakeStore : public LeaseStore {
 public:
  explicit FakeStore(FakeLease* f) : f_(f) {}
  Result<LeaseRecord> Get() override {
    std::lock_guard l(f_->mu);
    if (f_->fail) return Status::Unavailable("down");
    if (!f_->lease) return Status::NotFound("no lease");
    return *f_->lease;
  }
  Status Create(const LeaseRecord& r) override {
    std::lock_guard l(f_->mu);
    if (f_->fail) return Status::Unavailable("down");
    if (f_->lease) return Status::AlreadyExists("exists");
    f_->lease = r;
    f_->lease->resource_version = std::to_string(++f_->version);
    return Status::Ok();
  }
  Status Update(const LeaseRecord& r) override {
    std::lock_guard l(f_->mu);
    if (f_->fail) return Status::Unavailable("down");
    if (!f_->lease || f_->lease->resource_version != r.resource_version)
      return Status::Conflict("stale");
    f_->lease = r;
    f_->lease->resource_version = std::to_string(++f_->version);
    return Status::Ok();
  }

 private:
  FakeLease* f_;
};

LeaderElectionConfig Config(const std::string& id) {
  LeaderElectionConfig c;
  c.identity = id;
  c.lease_duration = 1000ms;
  c.renew_deadline = 600ms;
  c.retry_period = 50ms;
  return c;
}

TEST(LeaderElection, FirstCandidateLeadsSecondWaits) {
  FakeLease lease;
  LeaderElector a(Config("a"), std::make_unique<FakeStore>(&lease));
  LeaderElector b(Config("b"), std::make_unique<FakeStore>(&lease));
  EXPECT_TRUE(a.TryAcquireOrRenew());
  EXPECT_FALSE(b.TryAcquireOrRenew());
  EXPECT_TRUE(a.TryAcquireOrRenew());  // renew
  EXPECT_EQ(lease.lease->holder, "a");
  EXPECT_EQ(lease.lease->transitions, 0);
}

TEST(LeaderElection, StandbyTakesOverWhenLeaderStopsRenewing) {
  FakeLease lease;
  LeaderElector a(Config("a"), std::make_unique<FakeStore>(&lease));
  LeaderElector b(Config("b"), std::make_unique<FakeStore>(&lease));
  ASSERT_TRUE(a.TryAcquireOrRenew());
  auto start = std::chrono::steady_clock::now();
  std::thread t([&] { EXPECT_TRUE(b.AcquireBlocking()); });
  // a "dies": it never renews again. b must wait out the lease (1 s), not less.
  t.join();
  EXPECT_GE(std::chrono::steady_clock::now() - start, 900ms);
  EXPECT_EQ(lease.lease->holder, "b");
  EXPECT_EQ(lease.lease->transitions, 1);
  EXPECT_TRUE(b.IsLeader());
}

TEST(LeaderElection, ReleaseHandsOverAtOnce) {
  FakeLease lease;
  LeaderElector a(Config("a"), std::make_unique<FakeStore>(&lease));
  LeaderElector b(Config("b"), std::make_unique<FakeStore>(&lease));
  ASSERT_TRUE(a.AcquireBlocking());
  ASSERT_FALSE(b.TryAcquireOrRenew());
  ASSERT_TRUE(a.Release().ok());
  EXPECT_FALSE(a.IsLeader());
  EXPECT_EQ(lease.lease->holder, "");
  EXPECT_TRUE(b.TryAcquireOrRenew());
}

TEST(LeaderElection, LeaderStepsDownWhenRenewalsFailPastTheDeadline) {
  FakeLease lease;
  LeaderElector a(Config("a"), std::make_unique<FakeStore>(&lease));
  ASSERT_TRUE(a.AcquireBlocking());
  {
    std::lock_guard l(lease.mu);
    lease.fail = true;
  }
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(a.RenewLoop());
  EXPECT_GE(std::chrono::steady_clock::now() - start, 550ms);
  EXPECT_FALSE(a.IsLeader());
}

TEST(LeaderElection, StopEndsAcquire) {
  FakeLease lease;
  LeaderElector a(Config("a"), std::make_unique<FakeStore>(&lease));
  LeaderElector b(Config("b"), std::make_unique<FakeStore>(&lease));
  ASSERT_TRUE(a.TryAcquireOrRenew());
  std::atomic<bool> returned{false};
  bool got = true;
  std::thread t([&] {
    got = b.AcquireBlocking();
    returned = true;
  });
  b.Stop();
  EXPECT_TRUE(testing::WaitFor([&] { return returned.load(); }, 2000ms));
  t.join();
  EXPECT_FALSE(got);
}

}  // namespace
}  // namespace switchboard::operator_controller
