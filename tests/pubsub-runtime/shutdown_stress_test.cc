// Shutdown while messages are still arriving (issue 19): subscribe, receive
// a few messages, close, over and over, while a publisher keeps sending
// chunked messages of ~21 MiB (two bodies of ~10.7 MiB each) and small
// ones. A fixed number of cycles and no timing assertion: the test fails
// by crashing, by an ASan/LSan report, or by a wrong count.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
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
constexpr int kCycles = 200;

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
// sixteen 1 MiB payloads (as in the issue's reproduction), encoded once: a
// raw nats.c connection then sends them as fast as the server takes them,
// so the subscriber's reader is nearly always copying a large message.
std::vector<std::string> ChunkedBodies() {
  Message m;
  m.id = "stress-chunked";
  m.payloads.emplace();
  for (int i = 0; i < 16; ++i) m.payloads->push_back(RandomBytes(1u << 20, 100 + i));
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

// Publishes small, chunk 1, chunk 2, ... on `subject` until stopped; each
// round is flushed (a round trip), so the publisher never runs ahead of
// what the server has taken.
class Publisher {
 public:
  Publisher(const std::string& url, std::string subject)
      : raw_(url), subject_(std::move(subject)), bodies_(ChunkedBodies()) {
    bodies_.insert(bodies_.begin(), SmallBody());
    if (raw_.ok() && bodies_.size() >= 3) thread_ = std::thread([this] { Loop(); });
  }
  ~Publisher() { Stop(); }
  bool ok() const { return thread_.joinable() || rounds_ > 0; }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  int64_t rounds() const { return rounds_; }
  size_t chunks() const { return bodies_.size() - 1; }

 private:
  void Loop() {
    while (!stop_) {
      for (const auto& b : bodies_) {
        if (natsConnection_Publish(raw_.get(), subject_.c_str(), b.data(),
                                   static_cast<int>(b.size())) != NATS_OK) {
          failures_++;
        }
      }
      if (natsConnection_FlushTimeout(raw_.get(), 30000) != NATS_OK) failures_++;
      rounds_++;
    }
  }

  RawConnection raw_;
  std::string subject_;
  std::vector<std::string> bodies_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> rounds_{0};
  std::atomic<int64_t> failures_{0};
  std::thread thread_;
};

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

// `switchboard pubsub sub --count N` in a loop: connect, subscribe, receive
// N (1 to 3) messages, drop the subscription, then the connection.
TEST(ShutdownStressTest, CloseAfterCountWhileChunkedMessagesArrive) {
  NatsServer server;
  ASSERT_TRUE(server.ok()) << server.Log();
  auto topic = *Topic::TenantStream(kTenant);
  Publisher publisher(server.url(), "hatchet.pubsub." + topic.name);
  ASSERT_TRUE(publisher.ok());
  ASSERT_EQ(publisher.chunks(), 2u) << "sixteen 1 MiB payloads are sent as two bodies";
  for (int i = 0; i < kCycles; ++i) {
    SCOPED_TRACE("cycle " + std::to_string(i));
    auto client = NatsPubSub::Connect(Options(server.url()));
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    Counter counter;
    auto sub = (*client)->Subscribe(topic, counter.handler());
    ASSERT_TRUE(sub.ok()) << sub.status().ToString();
    ASSERT_TRUE(counter.Wait(1 + i % 3, std::chrono::seconds(60)));
    sub->reset();
    client->reset();
  }
  publisher.Stop();
  EXPECT_GT(publisher.rounds(), 0);
}

// The same on one long-lived connection: subscriptions come and go while
// the connection keeps reading large messages for them.
TEST(ShutdownStressTest, SubscriptionsComeAndGoOnOneConnection) {
  NatsServer server;
  ASSERT_TRUE(server.ok()) << server.Log();
  auto topic = *Topic::TenantStream(kTenant);
  Publisher publisher(server.url(), "hatchet.pubsub." + topic.name);
  ASSERT_TRUE(publisher.ok());
  auto client = NatsPubSub::Connect(Options(server.url()));
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  for (int i = 0; i < kCycles; ++i) {
    SCOPED_TRACE("cycle " + std::to_string(i));
    Counter counter;
    auto sub = (*client)->Subscribe(topic, counter.handler());
    ASSERT_TRUE(sub.ok()) << sub.status().ToString();
    ASSERT_TRUE(counter.Wait(1 + i % 3, std::chrono::seconds(60)));
    sub->reset();
  }
  client->reset();
  publisher.Stop();
}

// The operator's probe, over and over from two threads at once, while large
// messages arrive on the probe's own subject.
TEST(ShutdownStressTest, RepeatedProbesWhileChunkedMessagesArrive) {
  NatsServer server;
  ASSERT_TRUE(server.ok()) << server.Log();
  Publisher publisher(server.url(), std::string("hatchet.pubsub.") + kProbeTopicName);
  ASSERT_TRUE(publisher.ok());
  std::atomic<int> failed{0};
  std::string first_error;
  std::mutex mu;
  auto worker = [&] {
    for (int i = 0; i < kCycles / 2; ++i) {
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

}  // namespace
}  // namespace switchboard::pubsub
