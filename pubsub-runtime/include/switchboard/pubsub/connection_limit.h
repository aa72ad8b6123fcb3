// Which connection limit refused a connect, typed, so that no caller reads
// nats-server's -ERR texts: they are known in one place (nats_status.cc),
// which both writes the message of the refusal and answers this.
#pragma once

#include "switchboard/common/status.h"

namespace switchboard::pubsub {

enum class ConnectionLimit {
  kNone,     // not a refusal at a connection limit
  kAccount,  // the account's max_connections, across the cluster (after the
             // credentials were accepted)
  kServer,   // the server's own max_connections, for all of its clients
};

// For a Status from this library (Probe, NatsPubSub::Connect): a
// ResourceExhausted that names a connection limit says which; anything
// else is kNone.
ConnectionLimit ConnectionLimitOf(const Status& status);

}  // namespace switchboard::pubsub
