// Shared helpers for the NATS integration tests: a collecting handler, and
// a raw nats.c connection and subscriber for checking exactly what is on
// the wire.
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "switchboard/pubsub/nats_pubsub.h"
#include "switchboard/testing/wait.h"

namespace switchboard::pubsub::testutil {

// n bytes that do not compress, the same for the same seed.
inline std::string RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::string s(n, '\0');
  for (size_t i = 0; i + 8 <= n; i += 8) {
    uint64_t v = g();
    std::memcpy(&s[i], &v, 8);
  }
  return s;
}

// Collects every message a subscription hands over.
class Collector {
 public:
  Handler handler() {
    return [this](const Message& m) {
      std::lock_guard lock(mu_);
      messages_.push_back(m);
      return Status::Ok();
    };
  }
  size_t size() const {
    std::lock_guard lock(mu_);
    return messages_.size();
  }
  std::vector<Message> messages() const {
    std::lock_guard lock(mu_);
    return messages_;
  }
  bool WaitFor(size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(10)) const {
    return testing::WaitFor([&] { return size() >= n; }, timeout, std::chrono::milliseconds(5));
  }

 private:
  mutable std::mutex mu_;
  std::vector<Message> messages_;  // guarded by mu_
};

// A plain nats.c connection (no Switchboard code in the path).
class RawConnection {
 public:
  explicit RawConnection(const std::string& url) {
    status_ = natsConnection_ConnectTo(&nc_, url.c_str());
  }
  ~RawConnection() { natsConnection_Destroy(nc_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;
  bool ok() const { return status_ == NATS_OK; }
  natsConnection* get() const { return nc_; }

 private:
  natsConnection* nc_ = nullptr;
  natsStatus status_ = NATS_ERR;
};

// What a raw nats.c subscriber (no Switchboard code) receives on `subject`.
class WireTap {
 public:
  WireTap(const std::string& url, const std::string& subject) : raw_(url) {
    ok_ = raw_.ok() &&
          natsConnection_SubscribeSync(&sub_, raw_.get(), subject.c_str()) == NATS_OK &&
          natsConnection_Flush(raw_.get()) == NATS_OK;
  }
  ~WireTap() { natsSubscription_Destroy(sub_); }
  bool ok() const { return ok_; }
  // The next message body, or "" after 10 s.
  std::string Next() {
    natsMsg* msg = nullptr;
    if (natsSubscription_NextMsg(&msg, sub_, 10000) != NATS_OK) return "";
    std::string body(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg)));
    natsMsg_Destroy(msg);
    return body;
  }

 private:
  RawConnection raw_;
  natsSubscription* sub_ = nullptr;
  bool ok_ = false;
};

inline NatsOptions Options(const std::string& url, const std::string& prefix = "hatchet.pubsub") {
  NatsOptions o;
  o.urls = url;
  o.subject_prefix = prefix;
  o.reconnect_wait = std::chrono::milliseconds(50);
  return o;
}

}  // namespace switchboard::pubsub::testutil
