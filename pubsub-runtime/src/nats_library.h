// nats.c's process-wide state (its timer, async-callback and garbage
// collector threads, and the bookkeeping every connection and subscription
// thread reports to): opened when the first Connection needs it, torn down
// and joined by ShutdownNats() (nats_pubsub.h) once no Connection is left.
#pragma once

#include <memory>

#include "switchboard/common/status.h"

namespace switchboard::pubsub::internal {

// One Connection's claim on the library: opens it if needed. ShutdownNats
// waits until every claim is released. Thread-safe.
class NatsLibraryUse {
 public:
  NatsLibraryUse();
  ~NatsLibraryUse();
  NatsLibraryUse(const NatsLibraryUse&) = delete;
  NatsLibraryUse& operator=(const NatsLibraryUse&) = delete;
  // Whether nats_Open succeeded (the claim is held either way).
  const Status& status() const { return status_; }

 private:
  Status status_;
};

// Keeps `object` alive until ShutdownNats has seen every nats.c thread
// finish: for a closure nats.c may still read when no callback says when
// it has stopped.
void KeepUntilShutdown(std::shared_ptr<void> object);

// Marks the current thread as running one of this library's nats.c
// callbacks for the scope's life (see OnNatsCallbackThread).
class NatsCallbackScope {
 public:
  NatsCallbackScope();
  ~NatsCallbackScope();
  NatsCallbackScope(const NatsCallbackScope&) = delete;
  NatsCallbackScope& operator=(const NatsCallbackScope&) = delete;
};

// True inside a connection callback (async error, closed, disconnected,
// reconnected): that thread delivers the connection's closed callback, so
// code there must not wait for it.
bool OnNatsCallbackThread();

}  // namespace switchboard::pubsub::internal
