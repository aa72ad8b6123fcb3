// One nats.c connection with the callbacks Switchboard installs: async
// errors (permission violations ...) to NatsOptions::on_error, a log line on
// disconnect/reconnect, and a "closed for good" report.
//
// Lifetime: nats.c reaches ConnState through a heap-allocated shared_ptr
// (the callbacks' closure) that the closed callback, the last call nats.c
// makes for a connection, deletes. ~Connection closes the connection and
// waits for that callback, so no callback runs once it has returned.
#pragma once

#include <nats/nats.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "latch.h"
#include "nats_handles.h"
#include "nats_library.h"
#include "switchboard/common/status.h"
#include "switchboard/pubsub/nats_pubsub.h"

namespace switchboard::pubsub::internal {

// State the connection's callbacks reach through their closure.
struct ConnState {
  std::string prefix;
  std::shared_ptr<const UserJwtCredentials> user_jwt;  // the JWT callbacks' closure
  std::function<void(const Status&)> on_error;
  std::function<void()> on_reconnected;
  std::atomic<bool> closing{false};  // set before an intentional close
  Latch closed;                      // set by the closed callback
};

// The callbacks' closure: owned by nats.c from a successful connect until
// its closed callback deletes it; the caller deletes it if connect fails.
using ConnHolder = std::shared_ptr<ConnState>;

// Registers the callbacks on `opts` with `holder` as their closure.
Status InstallConnectionCallbacks(natsOptions* opts, ConnHolder* holder);

// PermissionDenied for a NATS permission violation: the server's text and
// what the user's permissions must allow.
Status PermissionViolation(std::string_view server_text, std::string_view prefix);

// Owns the connection; shared by the PubSub and its subscriptions so a
// subscription may outlive the PubSub object safely.
class Connection {
 public:
  Connection(std::unique_ptr<NatsLibraryUse> library, natsConnection* nc,
             std::shared_ptr<ConnState> state)
      : library_(std::move(library)), nc_(nc), state_(std::move(state)) {}
  // Closes the connection (nats.c joins its reader, flusher and reconnect
  // threads), waits for the closed callback, then destroys the retired
  // subscription handles.
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  natsConnection* get() const { return nc_.get(); }
  const ConnState& state() const { return *state_; }

  // Takes an unsubscribed subscription's handle and destroys it once the
  // connection's reader can no longer hold it. nats.c 3.4.1's reader looks
  // a subscription up and then uses it without taking a reference
  // (natsConn_processMsg copies the whole message in between): if the
  // handle were destroyed while the reader is in there, the reader would
  // lock a mutex in freed memory and queue the message on a freed list. A
  // round trip started after the unsubscribe proves the reader has moved
  // on (it handles the PONG after whatever it was reading; a reconnect
  // joins the old reader before a new one starts), so the handle goes at
  // once when `timeout` allows one (no round trip is tried while
  // reconnecting), and otherwise when a later round trip succeeds or the
  // connection is closed.
  void Retire(NatsSubscriptionPtr sub, std::chrono::milliseconds timeout);

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
  std::unique_ptr<NatsLibraryUse> library_;  // released last
  NatsConnectionPtr nc_;
  std::shared_ptr<ConnState> state_;
  std::mutex mu_;
  std::string reported_;                      // guarded by mu_: text of the last refusal returned
  std::vector<NatsSubscriptionPtr> retired_;  // guarded by mu_: see Retire
};

// Claims the library and connects synchronously with `options` (validated
// by the caller) and the callbacks above: what NatsPubSub and NatsClient
// are built on.
Result<std::shared_ptr<Connection>> OpenConnection(const NatsOptions& options);

}  // namespace switchboard::pubsub::internal
