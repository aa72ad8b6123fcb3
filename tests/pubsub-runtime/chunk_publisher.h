// A publisher of chunked messages just over 16 MiB (and small ones) for
// the shutdown tests: bodies encoded once, sent on a raw nats.c connection.
#pragma once

#include <nats/nats.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "nats_test_util.h"
#include "switchboard/pubsub/chunking.h"
#include "switchboard/pubsub/codec.h"
#include "switchboard/pubsub/nats_pubsub.h"

namespace switchboard::pubsub::testutil {

// The bodies a Switchboard publisher puts on the wire for one message of
// twelve 1 MiB payloads (just over 16 MiB as base64 JSON), encoded once: a
// raw nats.c connection sends them, so the subscriber's reader spends
// most of a round copying a large message.
inline std::vector<std::string> ChunkedBodies() {
  Message m;
  m.id = "stress-chunked";
  m.payloads.emplace();
  for (int i = 0; i < 12; ++i) m.payloads->push_back(RandomBytes(1u << 20, 100 + i));
  auto chunks = EncodeChunks(m, kRequiredMaxPayload);
  EXPECT_TRUE(chunks.ok()) << chunks.status().ToString();
  return chunks.ok() ? std::move(chunks).value() : std::vector<std::string>{};
}

inline std::string SmallBody() {
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
  int64_t rounds() const { return rounds_; }  // rounds sent and flushed
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
      rounds_++;
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
  std::atomic<int64_t> rounds_{0};
  std::thread thread_;
};

}  // namespace switchboard::pubsub::testutil
