// ProbePool: probes off the reconcile workers, at most one per key, bounded
// concurrency, the fallback only for refusals. The prober is a fake that
// counts calls (a real nats-server cannot be made to answer "refused" and
// "passed" to the same credentials on demand); the real probe is covered by
// the e2e tests.
#include "probe_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>

#include "switchboard/testing/wait.h"

namespace switchboard::operator_controller {
namespace {

using namespace std::chrono_literals;

struct Fake {
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::atomic<int> calls{0};
  std::atomic<int> running{0};
  std::atomic<int> max_running{0};
  std::set<std::string> refused;  // usernames the "server" refuses

  Result<pubsub::ProbeReport> operator()(const pubsub::ProbeOptions& o) {
    calls++;
    int now = ++running;
    int seen = max_running.load();
    while (now > seen && !max_running.compare_exchange_weak(seen, now)) {
    }
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return release; });
    }
    running--;
    if (refused.count(o.username)) return Status::Unauthenticated("Authorization Violation");
    pubsub::ProbeReport r;
    r.server_max_payload = 16777216;
    return r;
  }
  void Release() {
    {
      std::lock_guard lock(mu);
      release = true;
    }
    cv.notify_all();
  }
};

ProbeJob Job(const std::string& user, const std::string& fallback_user = "") {
  ProbeJob j;
  j.fingerprint = "fp-" + user;
  j.primary.username = user;
  if (!fallback_user.empty()) {
    j.fallback = j.primary;
    j.fallback->username = fallback_user;
  }
  return j;
}

TEST(ProbePool, OnePerKeyBoundedAndReportsBack) {
  Fake fake;
  std::mutex mu;
  std::vector<std::string> done;
  ProbePool pool(
      2,
      [&](const std::string& k) {
        std::lock_guard lock(mu);
        done.push_back(k);
      },
      {}, [&](const pubsub::ProbeOptions& o) { return fake(o); });
  for (int i = 0; i < 6; i++) pool.Submit("ns/b" + std::to_string(i), Job("u"));
  pool.Submit("ns/b0", Job("u"));  // already queued: ignored
  EXPECT_TRUE(pool.Busy("ns/b0"));
  ASSERT_TRUE(testing::WaitFor([&] { return fake.running.load() == 2; }, 5s));
  fake.Release();
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        std::lock_guard lock(mu);
        return done.size() == 6;
      },
      5s));
  EXPECT_EQ(fake.calls.load(), 6);
  EXPECT_EQ(fake.max_running.load(), 2) << "never more probes at once than threads";
  auto r = pool.Latest("ns/b3");
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->primary.ok());
  EXPECT_EQ(r->max_payload, 16777216);
  EXPECT_EQ(r->fingerprint, "fp-u");
  EXPECT_FALSE(pool.Busy("ns/b3"));
  pool.Forget("ns/b3");
  EXPECT_FALSE(pool.Latest("ns/b3").has_value());
}

TEST(ProbePool, FallbackOnlyWhenThePrimaryIsRefused) {
  Fake fake;
  fake.Release();
  fake.refused = {"new-user"};
  std::atomic<int> done{0};
  ProbePool pool(
      1, [&](const std::string&) { done++; }, {},
      [&](const pubsub::ProbeOptions& o) { return fake(o); });
  pool.Submit("a", Job("new-user", "old-user"));  // staged: new refused, old works
  ASSERT_TRUE(testing::WaitFor([&] { return done.load() == 1; }, 5s));
  auto a = pool.Latest("a");
  EXPECT_EQ(a->primary.code(), StatusCode::kUnauthenticated);
  EXPECT_TRUE(a->fallback_ok);
  EXPECT_EQ(fake.calls.load(), 2);
  pool.Submit("b", Job("old-user", "other"));  // primary passes: no fallback call
  ASSERT_TRUE(testing::WaitFor([&] { return done.load() == 2; }, 5s));
  EXPECT_TRUE(pool.Latest("b")->primary.ok());
  EXPECT_FALSE(pool.Latest("b")->fallback_ok);
  EXPECT_EQ(fake.calls.load(), 3);
}

}  // namespace
}  // namespace switchboard::operator_controller
