// KeyedJobs: the contract both kinds of slow work share (keyed_jobs.h),
// with a job whose run the test holds until it lets it go. ProbePool's
// tests cover the same contract through the probes' run.
#include "keyed_jobs.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "switchboard/testing/wait.h"

namespace switchboard::operator_controller {
namespace {

using namespace std::chrono_literals;

struct Job {
  std::string fingerprint;
};
struct Outcome {
  std::string fingerprint;
  int run = 0;  // which run of the whole test produced it
};
using Jobs = KeyedJobs<Job, Outcome>;

// Runs block until released; each records its fingerprint.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  int released = 0;  // runs allowed to finish
  std::atomic<int> started{0};
  std::vector<std::string> ran;  // guarded by mu

  Jobs::Ran Run(const Job& job) {
    std::unique_lock lock(mu);
    const int n = ++started;
    ran.push_back(job.fingerprint);
    cv.wait(lock, [&] { return released >= n; });
    return {Outcome{job.fingerprint, n}, std::nullopt};
  }
  void Release() {
    {
      std::lock_guard lock(mu);
      released++;
    }
    cv.notify_all();
  }
};

struct Done {
  std::mutex mu;
  std::vector<std::string> keys;
  void operator()(const std::string& k) {
    std::lock_guard lock(mu);
    keys.push_back(k);
  }
  size_t count() {
    std::lock_guard lock(mu);
    return keys.size();
  }
};

TEST(KeyedJobs, AnotherFingerprintWhileRunningRunsNextAndKeepsTheFirstOutcome) {
  Gate gate;
  Done done;
  Jobs jobs(
      1, [&](const Job& j) { return gate.Run(j); }, [&](const std::string& k) { done(k); });
  jobs.Submit("k", {"a"});
  ASSERT_TRUE(testing::WaitFor([&] { return gate.started == 1; }, 10s));
  jobs.Submit("k", {"a"});  // the same: nothing
  jobs.Submit("k", {"b"});  // another: after "a"
  gate.Release();
  ASSERT_TRUE(testing::WaitFor([&] { return gate.started == 2; }, 10s));
  ASSERT_TRUE(jobs.Latest("k"));
  EXPECT_EQ(jobs.Latest("k")->fingerprint, "a");
  EXPECT_EQ(done.count(), 0u) << "on_done only for the final outcome";
  gate.Release();
  ASSERT_TRUE(testing::WaitFor([&] { return done.count() == 1; }, 10s));
  EXPECT_EQ(jobs.Latest("k")->fingerprint, "b");
  EXPECT_FALSE(jobs.Busy("k"));
  std::lock_guard lock(gate.mu);
  EXPECT_EQ(gate.ran, (std::vector<std::string>{"a", "b"}));
}

TEST(KeyedJobs, ForgetWhileRunningDiscardsItsOutcome) {
  Gate gate;
  Done done;
  Jobs jobs(
      1, [&](const Job& j) { return gate.Run(j); }, [&](const std::string& k) { done(k); });
  jobs.Submit("k", {"a"});
  ASSERT_TRUE(testing::WaitFor([&] { return gate.started == 1; }, 10s));
  jobs.Forget("k");
  gate.Release();
  ASSERT_TRUE(testing::WaitFor([&] { return !jobs.Busy("k"); }, 10s));
  EXPECT_FALSE(jobs.Latest("k"));
  EXPECT_EQ(done.count(), 0u);
}

TEST(KeyedJobs, AFinishedJobWithTheSameFingerprintRunsAgainWhenSubmitted) {
  Gate gate;
  Done done;
  Jobs jobs(
      1, [&](const Job& j) { return gate.Run(j); }, [&](const std::string& k) { done(k); });
  gate.Release();
  gate.Release();
  jobs.Submit("k", {"a"});
  ASSERT_TRUE(testing::WaitFor([&] { return done.count() == 1; }, 10s));
  jobs.Submit("k", {"a"});  // a recheck: nothing queued or running any more
  ASSERT_TRUE(testing::WaitFor([&] { return done.count() == 2; }, 10s));
  EXPECT_EQ(jobs.Latest("k")->run, 2);
}

TEST(KeyedJobs, StopJoinsARunningJobAndClearsWhatIsLeft) {
  Gate gate;
  Jobs jobs(
      1, [&](const Job& j) { return gate.Run(j); }, [](const std::string&) {});
  jobs.Submit("k", {"a"});
  jobs.Submit("other", {"x"});
  ASSERT_TRUE(testing::WaitFor([&] { return gate.started == 1; }, 10s));
  std::thread stopper([&] { jobs.Stop(); });
  // Whether "other" starts before Stop takes effect is the threads' race:
  // both runs may finish.
  gate.Release();
  gate.Release();
  stopper.join();
  EXPECT_FALSE(jobs.Busy("k"));
  EXPECT_FALSE(jobs.Busy("other"));
  jobs.Submit("late", {"y"});  // after Stop: refused
  EXPECT_FALSE(jobs.Busy("late"));
}

}  // namespace
}  // namespace switchboard::operator_controller
