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
#include <mutex>
#include <string>
#include <string_view>

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

// PermissionDenied for a NATS permission violation: the server's text and
// what the user's permissions must allow.
Status PermissionViolation(std::string_view server_text, std::string_view prefix);

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

  // The server's verdict, to be called right after a round trip (flush).
  // NATS refuses a publish or subscription asynchronously: the server sends
  // -ERR and carries on, and nats.c records it as the connection's last
  // error before it reads the PONG that ends the flush. So after a flush,
  // a permission violation as last error that no earlier call returned is
  // the refusal of something sent before the flush: returned as
  // PermissionDenied (and remembered, so it is returned once). With
  // `only_naming` non-empty, a violation whose text does not contain it is
  // left for a later call. nats.c keeps only the last error: the very same
  // refusal twice in a row (same operation, same subject) is returned the
  // first time only; NatsOptions::on_error hears every one.
  Status TakeRefusal(std::string_view only_naming = {});

 private:
  NatsConnectionPtr nc_;
  std::shared_ptr<ConnState> state_;
  std::mutex mu_;
  std::string reported_;  // guarded by mu_: text of the last refusal returned
};

}  // namespace switchboard::pubsub::internal
