// One request that several NATS servers answer, such as the system
// account's $SYS.REQ.SERVER.PING.<what>: every server of a cluster replies,
// and nobody knows in advance how many there are. Connects (no max_payload
// check: a system user's connection carries no Hatchet messages), publishes
// `body` on `subject` with a fresh inbox as the reply subject, keeps every
// reply that arrives within `window` (or until `max_replies`), and closes.
//
// Errors as NatsPubSub::Connect's: InvalidArgument (no URL, no subject),
// Unavailable (no server reachable), Unauthenticated (credentials refused),
// and FromNats' mapping of a failed publish or subscribe. No reply at all
// is not an error: the caller decides what silence means.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "switchboard/common/status.h"
#include "switchboard/pubsub/nats_pubsub.h"

namespace switchboard::pubsub {

struct GatherOptions {
  NatsOptions connection;  // urls, credentials, TLS; the prefix is not used
  std::string subject;
  std::string body;
  std::chrono::milliseconds window{1000};  // from the publish
  size_t max_replies = 1024;
};

Result<std::vector<std::string>> Gather(const GatherOptions& options);

}  // namespace switchboard::pubsub
