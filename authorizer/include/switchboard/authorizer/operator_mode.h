// What differs for a NatsServer in AuthCallout with isolation: Accounts
// (NATS operator mode), in one place: the keys (from the callout Secret's
// operator-mode keys, operator_logic/operator_mode_keys.h), the user JWTs
// the authorizer's connections present instead of passwords, and the
// signer that places each allowed user in its installation's account
// (issuer_account = the account key derived from the installation signing
// seed and the installation's namespace/name, the key the operator pushed
// the account JWT under). A server in config mode has none of it.
#pragma once

#include <memory>

#include "switchboard/authorizer/answer.h"
#include "switchboard/common/status.h"
#include "switchboard/operator_logic/env.h"
#include "switchboard/operator_logic/operator_mode_keys.h"
#include "switchboard/pubsub/nats_pubsub.h"

namespace switchboard::authorizer {

struct OperatorMode {
  operator_logic::OperatorModeKeyPairs keys;
  OperatorModeSigner signer;  // signs with keys.installation_signing

  explicit OperatorMode(operator_logic::OperatorModeKeyPairs k);
  OperatorMode(const OperatorMode&) = delete;
  OperatorMode& operator=(const OperatorMode&) = delete;
};

// The operator-mode keys of a callout Secret as the authorizer serves
// them; `issuer_seed` is the Secret's callout issuer seed (the auth
// account's). kFailedPrecondition naming the key at fault (never a value)
// when they do not decode.
Result<std::shared_ptr<const OperatorMode>> OperatorModeOf(
    const operator_logic::OperatorModeSeeds& seeds, std::string_view issuer_seed);

// Replaces the username and password of `options` with the user JWT of the
// authorizer's user (`system`: the system account's user), issued now and
// presented on every connect and reconnect.
Status UseOperatorModeUser(pubsub::NatsOptions& options, const OperatorMode& mode, bool system);

}  // namespace switchboard::authorizer
