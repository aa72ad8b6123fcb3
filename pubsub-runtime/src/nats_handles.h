// RAII for nats.c handles: each opaque pointer with its *_Destroy.
#pragma once

#include <nats/nats.h>

#include <memory>

namespace switchboard::pubsub::internal {

struct NatsOptionsDeleter {
  void operator()(natsOptions* o) const { natsOptions_Destroy(o); }
};
struct NatsMsgDeleter {
  void operator()(natsMsg* m) const { natsMsg_Destroy(m); }
};
struct NatsSubscriptionDeleter {
  void operator()(natsSubscription* s) const { natsSubscription_Destroy(s); }
};
// Closing is separate (the owner waits for the closed callback first).
struct NatsConnectionDeleter {
  void operator()(natsConnection* c) const { natsConnection_Destroy(c); }
};

using NatsOptionsPtr = std::unique_ptr<natsOptions, NatsOptionsDeleter>;
using NatsMsgPtr = std::unique_ptr<natsMsg, NatsMsgDeleter>;
using NatsSubscriptionPtr = std::unique_ptr<natsSubscription, NatsSubscriptionDeleter>;
using NatsConnectionPtr = std::unique_ptr<natsConnection, NatsConnectionDeleter>;

}  // namespace switchboard::pubsub::internal
