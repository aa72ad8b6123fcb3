// One nats.c connection with the callbacks Switchboard installs: async
// errors (permission violations ...) to NatsOptions::on_error, a log line on
// disconnect/reconnect, and a "closed for good" report.
//
// Lifetime: the callbacks reach ConnState through a raw closure pointer, so
// ConnState lives until nats.c's closed callback (its last) has run.
#pragma once

#include <nats/nats.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "latch.h"
#include "nats_handles.h"
#include "switchboard/common/status.h"

namespace switchboard::pubsub::internal {

// State the connection's callbacks reach through their closure. It lives
// until the closed callback has run (the last one nats.c makes).
struct ConnState {
  std::string prefix;
  std::function<void(const Status&)> on_error;
  std::atomic<bool> closing{false};  // set before an intentional close
  Latch closed;
};

// Registers the callbacks on `opts` with `state` as their closure.
Status InstallConnectionCallbacks(natsOptions* opts, ConnState* state);

// Owns the connection; shared by the PubSub and its subscriptions so a
// subscription may outlive the PubSub object safely.
class Connection {
 public:
  Connection(natsConnection* nc, std::shared_ptr<ConnState> state)
      : nc_(nc), state_(std::move(state)) {}
  // Closes the connection and waits for the closed callback.
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  natsConnection* get() const { return nc_.get(); }
  const ConnState& state() const { return *state_; }

 private:
  NatsConnectionPtr nc_;
  std::shared_ptr<ConnState> state_;
};

}  // namespace switchboard::pubsub::internal
