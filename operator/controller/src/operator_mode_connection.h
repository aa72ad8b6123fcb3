// The operator's connection to a NatsServer in NATS operator mode
// (AuthCallout with isolation: Accounts) as the system account's user:
// the one place it is made, for the account syncs (account_syncs.h) and
// the usage collector (usage_collector.h).
#pragma once

#include <cstdint>
#include <string>

#include "switchboard/common/status.h"
#include "switchboard/operator_logic/operator_mode_keys.h"
#include "switchboard/pubsub/nats_pubsub.h"

namespace switchboard::operator_controller {

// `urls` and `ca_file` (the CA file of the server's spec.tls, "" when
// none), the system user's JWT (operator_logic::SystemUserJwt, issued at
// `now`, no expiry: presented again on every reconnect) and its nonce
// signed with a copy of the system user's key, so the options may outlive
// `keys`. The caller names the connection and sets its timeouts.
Result<pubsub::NatsOptions> OperatorModeSystemConnection(
    const std::string& urls, const std::string& ca_file,
    const operator_logic::OperatorModeKeyPairs& keys, int64_t now);

}  // namespace switchboard::operator_controller
