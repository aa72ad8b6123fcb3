// Shutdown while messages are still arriving: subscribe, receive
// a few messages, close, over and over, while a publisher keeps sending
// small messages and chunked ones just over 16 MiB (two bodies of ~8 MiB). A fixed number of cycles
// and no timing assertion: the test fails by crashing, by an ASan/LSan report, or by a wrong count.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <random>
#include <thread>

#include "chunk_publisher.h"
#include "nats_test_util.h"
#include "switchboard/pubsub/chunking.h"
#include "switchboard/pubsub/codec.h"
#include "switchboard/pubsub/nats_pubsub.h"
#include "switchboard/pubsub/probe.h"
#include "switchboard/testing/nats_server.h"
#include "switchboard/testing/wait.h"

namespace switchboard::pubsub {
namespace {

using testing::NatsServer;
using testutil::Options;
using testutil::Publisher;

constexpr const char* kTenant = "8f3b1c2d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
// Cycles per test; SWITCHBOARD_STRESS_CYCLES overrides `n` (to explore,
// not in CI).
int Cycles(int n) {
  const char* env = std::getenv("SWITCHBOARD_STRESS_CYCLES");
  return env != nullptr && std::atoi(env) > 0 ? std::atoi(env) : n;
}

// Threads of this process right now. The first call starts and joins a
// thread, so a sanitizer runtime's own helper thread (TSan starts one with
// the first thread) is already counted in a baseline.
size_t ThreadCount() {
  static const bool warmed = [] {
    std::thread([] {}).join();
    return true;
  }();
  (void)warmed;
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// Once the library is shut down no nats.c code runs any more. Its
// detached delivery threads may still be inside glibc's thread exit for a
// moment after their last nats.c instruction, hence the wait.
void ExpectNoThreadLeft(size_t threads_before) {
  ASSERT_TRUE(ShutdownNats().ok());
  EXPECT_TRUE(
      testing::WaitFor([&] { return ThreadCount() <= threads_before; }, std::chrono::seconds(10)))
      << ThreadCount() << " threads, " << threads_before << " before the test";
}

// Counts deliveries; Wait returns once `n` arrived (or the deadline passed).
class Counter {
 public:
  Handler handler() {
    return [this](const Message&) {
      std::lock_guard lock(mu_);
      ++n_;
      cv_.notify_all();
      return Status::Ok();
    };
  }
  bool Wait(int n, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return n_ >= n; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int n_ = 0;  // guarded by mu_
};

// `switchboard pubsub sub --count N` in a loop: connect, subscribe, ask
// for a round, receive N (1 to 3) small messages, drop the subscription,
// then the connection, while the chunks that follow are on the wire.
TEST(ShutdownStressTest, CloseAfterCountWhileChunkedMessagesArrive) {
  const size_t threads_before = ThreadCount();
  {
    NatsServer server;
    ASSERT_TRUE(server.ok()) << server.Log();
    auto topic = *Topic::TenantStream(kTenant);
    Publisher publisher(server.url(), "hatchet.pubsub." + topic.name, Publisher::Mode::kTriggered);
    ASSERT_TRUE(publisher.ok());
    ASSERT_EQ(publisher.chunks(), 2u) << "twelve 1 MiB payloads are sent as two bodies";
    for (int i = 0, n = Cycles(200); i < n; ++i) {
      SCOPED_TRACE("cycle " + std::to_string(i));
      auto client = NatsPubSub::Connect(Options(server.url()));
      ASSERT_TRUE(client.ok()) << client.status().ToString();
      Counter counter;
      auto sub = (*client)->Subscribe(topic, counter.handler());
      ASSERT_TRUE(sub.ok()) << sub.status().ToString();
      publisher.Go();
      ASSERT_TRUE(counter.Wait(1 + i % 3, std::chrono::seconds(60)));
      sub->reset();
      client->reset();
    }
    publisher.Stop();
    EXPECT_EQ(publisher.failures(), 0);
  }
  ExpectNoThreadLeft(threads_before);
}

// The same on one long-lived connection: subscriptions come and go while
// the connection keeps reading large messages for them.
TEST(ShutdownStressTest, SubscriptionsComeAndGoOnOneConnection) {
  const size_t threads_before = ThreadCount();
  {
    NatsServer server;
    ASSERT_TRUE(server.ok()) << server.Log();
    auto topic = *Topic::TenantStream(kTenant);
    Publisher publisher(server.url(), "hatchet.pubsub." + topic.name, Publisher::Mode::kTriggered);
    ASSERT_TRUE(publisher.ok());
    auto client = NatsPubSub::Connect(Options(server.url()));
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    for (int i = 0, n = Cycles(100); i < n; ++i) {
      SCOPED_TRACE("cycle " + std::to_string(i));
      Counter counter;
      auto sub = (*client)->Subscribe(topic, counter.handler());
      ASSERT_TRUE(sub.ok()) << sub.status().ToString();
      publisher.Go();
      ASSERT_TRUE(counter.Wait(1 + i % 3, std::chrono::seconds(60)));
      sub->reset();
    }
    client->reset();
    publisher.Stop();
    EXPECT_EQ(publisher.failures(), 0);
  }
  ExpectNoThreadLeft(threads_before);
}

// The operator's probe, over and over from two threads at once, while
// rounds of large messages keep arriving on the probe's own subject.
TEST(ShutdownStressTest, RepeatedProbesWhileChunkedMessagesArrive) {
  const size_t threads_before = ThreadCount();
  {
    NatsServer server;
    ASSERT_TRUE(server.ok()) << server.Log();
    Publisher publisher(server.url(), std::string("hatchet.pubsub.") + kProbeTopicName,
                        Publisher::Mode::kContinuous);
    ASSERT_TRUE(publisher.ok());
    std::atomic<int> failed{0};
    std::string first_error;
    std::mutex mu;
    auto worker = [&] {
      for (int i = 0, n = Cycles(100) / 2; i < n; ++i) {
        auto r = Probe({.urls = server.url(), .timeout = std::chrono::seconds(60)});
        if (!r.ok()) {
          std::lock_guard lock(mu);
          if (failed++ == 0) first_error = r.status().ToString();
        }
      }
    };
    std::thread a(worker), b(worker);
    a.join();
    b.join();
    publisher.Stop();
    EXPECT_EQ(failed, 0) << first_error;
  }
  ExpectNoThreadLeft(threads_before);
}

}  // namespace
}  // namespace switchboard::pubsub
