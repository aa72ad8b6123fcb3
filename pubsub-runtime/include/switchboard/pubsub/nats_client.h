// A plain NATS client over the runtime's nats.c connection: raw subjects,
// raw bytes, queue subscriptions and requests, for services that speak NATS
// protocols of their own (the auth callout's authorizer answers
// $SYS.REQ.USER.AUTH and asks the system account for CONNZ and KICK).
//
// The same connection, subscription and library lifetime as NatsPubSub
// (nats_pubsub.h, "Shutdown" in the README): destroying a Subscription
// returns once no handler call runs and none will start, a client holds the
// library until it is destroyed, and ShutdownNats() waits for the last one.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/common/status.h"
#include "switchboard/pubsub/nats_pubsub.h"
#include "switchboard/pubsub/pubsub.h"

namespace switchboard::pubsub {

// One message as it came; the views are valid only during the call.
struct RawMessage {
  std::string_view subject;
  std::string_view reply;  // empty when the sender expects no answer
  std::string_view data;
};

// Called on the subscription's nats.c thread, one call at a time per
// subscription. Exceptions are caught and logged.
using RawHandler = std::function<void(const RawMessage&)>;

enum class ConnectionState { kConnected, kReconnecting, kClosed };

class NatsClient {
 public:
  // Connects synchronously with NatsOptions' settings (reconnect forever,
  // nothing buffered while disconnected); `required_max_payload` and
  // `subject_prefix` are not used. Errors as NatsPubSub::Connect.
  static Result<std::unique_ptr<NatsClient>> Connect(const NatsOptions& options);
  virtual ~NatsClient() = default;

  // Unavailable at once while disconnected (nothing is buffered).
  virtual Status Publish(std::string_view subject, std::string_view data) = 0;

  // Subscribes (a queue subscription when `queue` is not empty) and
  // flushes: interest exists on the server when this returns.
  // PermissionDenied with the server's message when it refuses.
  virtual Result<std::unique_ptr<Subscription>> Subscribe(const std::string& subject,
                                                          const std::string& queue,
                                                          RawHandler handler) = 0;

  // One request, the first reply's body. Timeout when none comes in time;
  // Unavailable when no one listens (the server says so at once).
  virtual Result<std::string> Request(const std::string& subject, std::string_view data,
                                      std::chrono::milliseconds timeout) = 0;

  // A request that several responders answer (every server of a cluster
  // answers $SYS.REQ.SERVER.PING.*): the replies that came within `wait`,
  // or as soon as `max_replies` (when > 0) came.
  virtual Result<std::vector<std::string>> RequestAll(const std::string& subject,
                                                      std::string_view data,
                                                      std::chrono::milliseconds wait,
                                                      size_t max_replies = 0) = 0;

  // Round trip (PING/PONG) within `timeout`.
  virtual Status Flush(std::chrono::milliseconds timeout) = 0;
  virtual ConnectionState State() const = 0;
  virtual std::string ConnectedUrl() const = 0;
  // The id (N...) of the server currently connected to, "" when none.
  virtual std::string ConnectedServerId() const = 0;
  // The client URLs of the cluster's other servers as the servers announce
  // them (INFO connect_urls; "nats://host:port", the seeds left out), kept
  // current as servers join and leave. Empty for a lone server, a pinned
  // connection, or a cluster with `no_advertise: true`.
  virtual std::vector<std::string> DiscoveredServers() const = 0;
};

}  // namespace switchboard::pubsub
