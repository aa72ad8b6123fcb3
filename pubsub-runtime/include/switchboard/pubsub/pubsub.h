// The pub/sub interface every backend implements (Go: msgqueue.PubSub).
//
// Semantics are core NATS: best-effort, at-most-once, fan-out to every
// subscriber of a topic. Handler errors are logged and never redelivered.
#pragma once

#include <functional>
#include <memory>

#include "switchboard/common/status.h"
#include "switchboard/pubsub/message.h"
#include "switchboard/pubsub/topic.h"

namespace switchboard::pubsub {

// Called once per received message, on a library thread (one thread per
// subscription: calls for one subscription never overlap). The message is
// already decompressed (compressed == false). The reference is valid only
// during the call (the object is reused): copy what you keep. A non-OK
// status or an exception is logged; the message is not redelivered.
using Handler = std::function<Status(const Message&)>;

// An active subscription; destroying it unsubscribes and returns once no
// handler call is running and none will start (from inside its own handler
// it cannot wait: that call is the last).
class Subscription {
 public:
  virtual ~Subscription() = default;
};

class PubSub {
 public:
  virtual ~PubSub() = default;

  // Publishes to `<prefix>.<topic.name>`. Fails fast (Unavailable) while
  // disconnected: nothing is buffered. Thread-safe.
  virtual Status Publish(const Topic& topic, const Message& message) = 0;

  // Subscribes; interest is registered on the server (flushed) before this
  // returns, so a publish made after it is received. PermissionDenied, with
  // the server's message, when the server refuses the subscription (the
  // round trip brings the refusal back first). Thread-safe.
  virtual Result<std::unique_ptr<Subscription>> Subscribe(const Topic& topic, Handler handler) = 0;

  // True while connected. For observability only: never gate health on it.
  virtual bool IsReady() const = 0;

  // Backend kind for metrics: "nats".
  virtual std::string_view Kind() const = 0;
};

}  // namespace switchboard::pubsub
