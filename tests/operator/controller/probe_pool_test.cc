// ProbePool: probes off the reconcile workers, at most one per key, bounded
// concurrency, the fallback only for refusals. The prober is a fake that
// counts calls (a real nats-server cannot be made to answer "refused" and
// "passed" to the same credentials on demand); the real probe is covered by
// the e2e tests.
#include "probe_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <variant>
#include <vector>

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

// An AuthCallout job: refusals are judged by DecideProbeRetry on these facts.
ProbeJob CalloutJob(const std::string& user, std::chrono::milliseconds credentials_age = {}) {
  ProbeJob j = Job(user);
  operator_logic::ProbeFailureFacts f;
  f.user = user;
  f.server = "nats/shared";
  operator_logic::ThroughAuthorizers authorizers;
  authorizers.callout_retry =
      1ms;  // retries as soon as the policy allows: the test waits on counts
  f.path = authorizers;
  f.reload_retry = 1ms;
  j.retry = f;
  j.credentials_since = std::chrono::steady_clock::now() - credentials_age;
  return j;
}

// A prober whose answers are scripted per user; never blocks.
struct Scripted {
  std::mutex mu;
  std::map<std::string, int> refusals_left;  // per user: refused this many times, then passes
  std::map<std::string, int> calls;
  StatusCode refusal = StatusCode::kUnauthenticated;

  Result<pubsub::ProbeReport> operator()(const pubsub::ProbeOptions& o) {
    std::lock_guard lock(mu);
    calls[o.username]++;
    auto it = refusals_left.find(o.username);
    if (it != refusals_left.end() && it->second != 0) {
      if (it->second > 0) it->second--;
      return Status(refusal, "Authorization Violation");
    }
    return pubsub::ProbeReport{};
  }
  int Calls(const std::string& user) {
    std::lock_guard lock(mu);
    return calls[user];
  }
};

struct Done {
  std::mutex mu;
  std::map<std::string, int> by_key;
  void operator()(const std::string& k) {
    std::lock_guard lock(mu);
    by_key[k]++;
  }
  int Of(const std::string& k) {
    std::lock_guard lock(mu);
    return by_key[k];
  }
};

TEST(ProbePool, RetriesAYoungCalloutRefusalItselfAndReportsOnlyTheFinalOutcome) {
  Scripted fake;
  fake.refusals_left["new"] = 3;
  Done done;
  ProbePool pool(
      2, [&](const std::string& k) { done(k); }, {},
      [&](const pubsub::ProbeOptions& o) { return fake(o); });
  pool.Submit("ns/a", CalloutJob("new"));
  ASSERT_TRUE(testing::WaitFor([&] { return done.Of("ns/a") == 1; }, 10s));
  EXPECT_EQ(fake.Calls("new"), 4) << "three refusals retried in the pool, then the pass";
  auto r = pool.Latest("ns/a");
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->primary.ok());
  EXPECT_FALSE(pool.Busy("ns/a"));
  EXPECT_EQ(done.Of("ns/a"), 1) << "one callback: the final outcome";
}

TEST(ProbePool, ARefusalPastThePatienceIsFinalAtOnce) {
  Scripted fake;
  fake.refusals_left["old"] = -1;  // always refused
  fake.refusals_left["lagging"] = -1;
  Done done;
  ProbePool pool(
      1, [&](const std::string& k) { done(k); }, {},
      [&](const pubsub::ProbeOptions& o) { return fake(o); });
  pool.Submit("ns/a", CalloutJob("old", std::chrono::minutes(2)));
  ASSERT_TRUE(testing::WaitFor([&] { return done.Of("ns/a") == 1; }, 10s));
  EXPECT_EQ(fake.Calls("old"), 1);
  // Past the authorizers' sync window, still young: the reconcile takes it
  // (and reports AuthorizerPending), the pool does not hold it back.
  pool.Submit("ns/b", CalloutJob("lagging", std::chrono::seconds(10)));
  ASSERT_TRUE(testing::WaitFor([&] { return done.Of("ns/b") == 1; }, 10s));
  EXPECT_EQ(fake.Calls("lagging"), 1);
  EXPECT_EQ(pool.Latest("ns/a")->primary.code(), StatusCode::kUnauthenticated);
}

TEST(ProbePool, OtherErrorsAndFileModeAreNotRetried) {
  Scripted fake;
  fake.refusals_left["u"] = -1;
  fake.refusal = StatusCode::kUnavailable;
  Done done;
  ProbePool pool(
      1, [&](const std::string& k) { done(k); }, {},
      [&](const pubsub::ProbeOptions& o) { return fake(o); });
  pool.Submit("ns/a", CalloutJob("u"));
  ASSERT_TRUE(testing::WaitFor([&] { return done.Of("ns/a") == 1; }, 10s));
  EXPECT_EQ(fake.Calls("u"), 1) << "unreachable: the reconcile decides";
  {
    std::lock_guard lock(fake.mu);
    fake.refusal = StatusCode::kUnauthenticated;
  }
  // Through the file: the controller's facts say so, and a refusal there
  // waits for a reload, which the reconcile decides on.
  ProbeJob file_mode = CalloutJob("u");
  file_mode.retry->path = operator_logic::ThroughFile{};
  pool.Submit("ns/b", std::move(file_mode));
  ASSERT_TRUE(testing::WaitFor([&] { return done.Of("ns/b") == 1; }, 10s));
  EXPECT_EQ(fake.Calls("u"), 2);
}

// A connection refused at the account's connection limit passed the
// credentials: no authorizer is catching up, so no retry in the pool even
// for young credentials, and no fallback (the same account); the metric
// says which limit.
TEST(ProbePool, AConnectionLimitIsFinalAtOnce) {
  Scripted fake;
  fake.refusals_left["new"] = -1;
  fake.refusal = StatusCode::kResourceExhausted;
  Done done;
  std::mutex mu;
  std::vector<std::string> results;
  ProbePool pool(
      1, [&](const std::string& k) { done(k); },
      [&](const std::string& result) {
        std::lock_guard lock(mu);
        results.push_back(result);
      },
      [&](const pubsub::ProbeOptions& o) { return fake(o); });
  ProbeJob j = CalloutJob("new");
  j.fallback = j.primary;
  j.fallback->username = "old";
  pool.Submit("ns/a", std::move(j));
  ASSERT_TRUE(testing::WaitFor([&] { return done.Of("ns/a") == 1; }, 10s));
  EXPECT_EQ(fake.Calls("new"), 1);
  EXPECT_EQ(fake.Calls("old"), 0);
  EXPECT_EQ(pool.Latest("ns/a")->primary.code(), StatusCode::kResourceExhausted);
  EXPECT_FALSE(pool.Latest("ns/a")->fallback_ok);
  std::lock_guard lock(mu);
  EXPECT_EQ(results, std::vector<std::string>{"ConnectionLimitReached"});
}

// The pool's retries are timers, not threads: with one thread, a key
// waiting for its retry does not hold back another key's probe.
TEST(ProbePool, AWaitingRetryHoldsNoThread) {
  Scripted fake;
  fake.refusals_left["slow"] = -1;
  Done done;
  ProbePool pool(
      1, [&](const std::string& k) { done(k); }, {},
      [&](const pubsub::ProbeOptions& o) { return fake(o); });
  ProbeJob waiting = CalloutJob("slow");
  waiting.retry->reload_retry = std::chrono::hours(1);  // its retry never comes in this test
  std::get<operator_logic::ThroughAuthorizers>(waiting.retry->path).callout_retry =
      std::chrono::hours(1);
  pool.Submit("ns/waiting", std::move(waiting));
  ASSERT_TRUE(testing::WaitFor([&] { return fake.Calls("slow") == 1; }, 10s));
  pool.Submit("ns/waiting", CalloutJob("slow"));  // same fingerprint: stays waiting
  pool.Submit("ns/other", Job("fine"));
  ASSERT_TRUE(testing::WaitFor([&] { return done.Of("ns/other") == 1; }, 10s));
  EXPECT_EQ(fake.Calls("slow"), 1) << "neither requeued nor retried before its time";
  EXPECT_TRUE(pool.Busy("ns/waiting"));
  EXPECT_FALSE(pool.Latest("ns/waiting").has_value()) << "no outcome until the final one";
  EXPECT_EQ(done.Of("ns/waiting"), 0);
}

// Level-based: a backend changed while its retry waits is probed for what
// it is now; one deleted leaves nothing behind; Stop with retries pending
// returns (ASan/TSan builds check for leaks and races).
TEST(ProbePool, ChangeForgetAndStopCancelAWaitingRetry) {
  Scripted fake;
  fake.refusals_left["slow"] = -1;
  Done done;
  auto pool = std::make_unique<ProbePool>(
      1, [&](const std::string& k) { done(k); }, std::function<void(const std::string&)>{},
      [&](const pubsub::ProbeOptions& o) { return fake(o); });
  auto parked = [&](const std::string& user) {
    ProbeJob j = CalloutJob(user);
    j.retry->reload_retry = std::chrono::hours(1);
    std::get<operator_logic::ThroughAuthorizers>(j.retry->path).callout_retry =
        std::chrono::hours(1);
    return j;
  };
  pool->Submit("ns/changed", parked("slow"));
  pool->Submit("ns/deleted", parked("slow"));
  ASSERT_TRUE(testing::WaitFor([&] { return fake.Calls("slow") == 2; }, 10s));

  pool->Submit("ns/changed", Job("rotated"));  // another fingerprint: probed now
  ASSERT_TRUE(testing::WaitFor([&] { return done.Of("ns/changed") == 1; }, 10s));
  EXPECT_EQ(pool->Latest("ns/changed")->fingerprint, "fp-rotated");

  pool->Forget("ns/deleted");
  EXPECT_FALSE(pool->Busy("ns/deleted"));
  pool->Submit("ns/deleted", parked("slow"));  // re-created: a fresh job
  ASSERT_TRUE(testing::WaitFor([&] { return fake.Calls("slow") == 3; }, 10s));
  EXPECT_TRUE(pool->Busy("ns/deleted"));
  pool->Stop();
  EXPECT_EQ(done.Of("ns/deleted"), 0);
  pool->Submit("ns/after", Job("fine"));  // stopped: ignored
  EXPECT_FALSE(pool->Busy("ns/after"));
  pool.reset();
}

}  // namespace
}  // namespace switchboard::operator_controller
