// Work queue semantics: de-duplication, one worker per key, delays, backoff,
// shutdown.
#include "switchboard/kube/workqueue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>
#include <vector>

#include "switchboard/testing/wait.h"

namespace switchboard::kube {
namespace {

using namespace std::chrono_literals;
using testing::WaitFor;

TEST(WorkQueue, DeduplicatesQueuedKeys) {
  WorkQueue q;
  q.Add("a");
  q.Add("b");
  q.Add("a");
  EXPECT_EQ(q.Depth(), 2u);
  EXPECT_EQ(q.Get(), "a");
  EXPECT_EQ(q.Get(), "b");
  EXPECT_EQ(q.Depth(), 0u);
  EXPECT_EQ(q.ProcessingCount(), 2u);
}

TEST(WorkQueue, ReAddWhileProcessingRunsAgainAfterDone) {
  WorkQueue q;
  q.Add("a");
  auto k = q.Get();
  ASSERT_EQ(k, "a");
  q.Add("a");  // changed while a worker holds it
  q.Add("a");
  EXPECT_EQ(q.Depth(), 0u) << "must not be handed to a second worker";
  EXPECT_EQ(q.GetFor(20ms), std::nullopt);
  q.Done("a");
  EXPECT_EQ(q.Depth(), 1u);
  EXPECT_EQ(q.GetFor(1s), "a");
  q.Done("a");
  EXPECT_EQ(q.GetFor(20ms), std::nullopt) << "processed once more, not twice";
}

TEST(WorkQueue, NeverTwoWorkersOnOneKey) {
  WorkQueue q;
  std::map<std::string, std::atomic<int>> active;
  for (const char* k : {"a", "b", "c"}) active[k] = 0;
  std::atomic<int> overlaps{0};
  std::atomic<int> processed{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&] {
      while (auto key = q.Get()) {
        if (active[*key].fetch_add(1) != 0) overlaps.fetch_add(1);
        std::this_thread::yield();
        active[*key].fetch_sub(1);
        processed.fetch_add(1);
        q.Done(*key);
      }
    });
  }
  for (int i = 0; i < 3000; ++i) q.Add(i % 3 == 0 ? "a" : (i % 3 == 1 ? "b" : "c"));
  ASSERT_TRUE(WaitFor([&] { return q.Depth() == 0 && q.ProcessingCount() == 0; }, 10s));
  q.ShutDown();
  for (auto& t : workers) t.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_GE(processed.load(), 3);
  EXPECT_LE(processed.load(), 3000);
}

TEST(WorkQueue, AddAfterDelaysAndEarlierWins) {
  WorkQueue q;
  auto start = std::chrono::steady_clock::now();
  q.AddAfter("late", 5s);
  q.AddAfter("late", 50ms);  // earlier time wins
  EXPECT_EQ(q.Depth(), 0u);
  EXPECT_EQ(q.DelayedCount(), 1u);
  auto k = q.GetFor(3s);
  ASSERT_EQ(k, "late");
  EXPECT_GE(std::chrono::steady_clock::now() - start, 50ms);
  q.Done("late");
}

TEST(WorkQueue, AddSupersedesPendingDelay) {
  WorkQueue q;
  q.AddAfter("k", 10s);
  q.Add("k");
  EXPECT_EQ(q.GetFor(100ms), "k");
  q.Done("k");
  EXPECT_EQ(q.DelayedCount(), 0u);
}

TEST(WorkQueue, PerKeyExponentialBackoffAndForget) {
  WorkQueue q(WorkQueue::Options{10ms, 80ms});
  EXPECT_EQ(q.NextBackoff("k"), 10ms);
  q.AddRateLimited("k");
  EXPECT_EQ(q.NumRequeues("k"), 1);
  EXPECT_EQ(q.NextBackoff("k"), 20ms);
  q.AddRateLimited("k");  // already waiting: the earlier due time stays
  EXPECT_EQ(q.NextBackoff("k"), 40ms);
  q.AddRateLimited("k");
  q.AddRateLimited("k");
  EXPECT_EQ(q.NextBackoff("k"), 80ms) << "capped at max_delay";
  EXPECT_EQ(q.NextBackoff("other"), 10ms) << "per key";
  q.Forget("k");
  EXPECT_EQ(q.NumRequeues("k"), 0);
  EXPECT_EQ(q.NextBackoff("k"), 10ms);
  EXPECT_EQ(q.GetFor(2s), "k");
}

TEST(WorkQueue, ShutDownDrainsThenReturnsNullopt) {
  WorkQueue q;
  q.Add("a");
  q.AddAfter("delayed", 10s);
  std::atomic<bool> woke{false};
  q.ShutDown();
  q.Add("ignored");
  EXPECT_TRUE(q.ShuttingDown());
  EXPECT_EQ(q.Get(), "a");
  EXPECT_EQ(q.Get(), std::nullopt);
  EXPECT_EQ(q.DelayedCount(), 0u);
  // A worker blocked in Get wakes up on ShutDown.
  WorkQueue q3;
  std::thread waiter([&] {
    auto k = q3.Get();
    woke = !k.has_value();
  });
  q3.ShutDown();
  waiter.join();
  EXPECT_TRUE(woke.load());
}

TEST(WorkQueue, GetForTimesOut) {
  WorkQueue q;
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(q.GetFor(30ms), std::nullopt);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 30ms);
}

}  // namespace
}  // namespace switchboard::kube
