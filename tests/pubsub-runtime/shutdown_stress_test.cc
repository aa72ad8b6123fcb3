// Shutdown while messages are still arriving (issue 19): subscribe, receive
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
using testutil::RawConnection;

constexpr const char* kTenant = "8f3b1c2d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
// Cycles per test; SWITCHBOARD_STRESS_CYCLES overrides `n` (to explore,
// not in CI).
int Cycles(int n) {
  const char* env = std::getenv("SWITCHBOARD_STRESS_CYCLES");
  return env != nullptr && std::atoi(env) > 0 ? std::atoi(env) : n;
}

std::string RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::string s(n, '\0');
  for (size_t i = 0; i + 8 <= n; i += 8) {
    uint64_t v = g();
    std::memcpy(&s[i], &v, 8);
  }
  return s;
}

// The bodies a Switchboard publisher puts on the wire for one message of
// twelve 1 MiB payloads (just over 16 MiB as base64 JSON), encoded once: a
// raw nats.c connection sends them, so the subscriber's reader spends
// most of a round copying a large message.
std::vector<std::string> ChunkedBodies() {
  Message m;
  m.id = "stress-chunked";
  m.payloads.emplace();
  for (int i = 0; i < 12; ++i) m.payloads->push_back(RandomBytes(1u << 20, 100 + i));
  auto chunks = EncodeChunks(m, kRequiredMaxPayload);
  EXPECT_TRUE(chunks.ok()) << chunks.status().ToString();
  return chunks.ok() ? std::move(chunks).value() : std::vector<std::string>{};
}

std::string SmallBody() {
  Message m;
  m.id = "stress-small";
  m.payloads = std::vector<std::string>{R"({"small":true})"};
  return EncodeMessage(m);
}

// Sends rounds of three small messages and the two chunks on `subject`:
// one round per Go() when triggered (the chunks are then on the wire just
// as the subscriber, which waits for small messages only, closes), or
// round after round until stopped. Each round ends with a round trip, so
// the publisher never runs ahead of what the server has taken.
class Publisher {
 public:
  enum class Mode { kTriggered, kContinuous };
  Publisher(const std::string& url, std::string subject, Mode mode)
      : raw_(url), subject_(std::move(subject)), mode_(mode) {
    bodies_ = ChunkedBodies();
    chunks_ = bodies_.size();
    bodies_.insert(bodies_.begin(), 3, SmallBody());
    if (raw_.ok() && chunks_ > 0) thread_ = std::thread([this] { Loop(); });
  }
  ~Publisher() { Stop(); }
  bool ok() const { return thread_.joinable(); }
  size_t chunks() const { return chunks_; }
  int64_t failures() const { return failures_; }
  void Go() {
    std::lock_guard lock(mu_);
    ++tokens_;
    cv_.notify_all();
  }
  void Stop() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
      cv_.notify_all();
    }
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Loop() {
    while (true) {
      {
        std::unique_lock lock(mu_);
        if (mode_ == Mode::kTriggered) cv_.wait(lock, [&] { return stop_ || tokens_ > 0; });
        if (stop_) return;
        if (tokens_ > 0) --tokens_;
      }
      for (const auto& b : bodies_) {
        if (natsConnection_Publish(raw_.get(), subject_.c_str(), b.data(),
                                   static_cast<int>(b.size())) != NATS_OK) {
          failures_++;
        }
      }
      if (natsConnection_FlushTimeout(raw_.get(), 60000) != NATS_OK) failures_++;
    }
  }

  RawConnection raw_;
  std::string subject_;
  Mode mode_;
  std::vector<std::string> bodies_;
  size_t chunks_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  int64_t tokens_ = 0;  // guarded by mu_: rounds asked for and not yet sent
  bool stop_ = false;   // guarded by mu_
  std::atomic<int64_t> failures_{0};
  std::thread thread_;
};

// Threads of this process right now.
size_t ThreadCount() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
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
  // Every nats.c thread has finished once the library is shut down.
  ASSERT_TRUE(ShutdownNats().ok());
  EXPECT_EQ(ThreadCount(), threads_before);
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
  ASSERT_TRUE(ShutdownNats().ok());
  EXPECT_EQ(ThreadCount(), threads_before);
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
  ASSERT_TRUE(ShutdownNats().ok());
  EXPECT_EQ(ThreadCount(), threads_before);
}

}  // namespace
}  // namespace switchboard::pubsub
