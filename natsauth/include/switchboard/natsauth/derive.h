// Key pairs derived from another key's seed: the same parent seed and label
// give the same key pair on every process that holds the parent, with
// nothing stored. The operator and the authorizer both hold the NatsServer's
// installation signing seed and so compute the same account key for an
// installation (operator_logic/operator_mode_keys.h) from cluster state
// alone.
#pragma once

#include <string_view>

#include "switchboard/common/status.h"
#include "switchboard/natsauth/nkey.h"

namespace switchboard::natsauth {

// The key pair of `type` whose ed25519 seed is HMAC-SHA256 keyed by
// `parent`'s raw seed over `label`. Knowing the child's seed or public key
// tells nothing about the parent's seed (HMAC is a PRF). `type` must be a
// signing kind (not kCurve, not kSeed). The intermediate bytes are wiped.
Result<KeyPair> DeriveKeyPair(const KeyPair& parent, KeyType type, std::string_view label);

}  // namespace switchboard::natsauth
