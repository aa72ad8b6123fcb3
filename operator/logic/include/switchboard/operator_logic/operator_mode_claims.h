// AuthCallout with isolation: Accounts runs NATS in operator mode: the
// claims the operator signs for it, pure and table-tested. Keys and where
// their seeds live are the caller's (an owned Secret); nothing here reads a
// clock or a seed.
//
// The accounts:
// - the system account (SYS): the operator's own user pushes account JWTs
//   and finds connections with it;
// - the auth account (SWITCHBOARD_AUTH): the callout's account. Its JWT
//   enables external authorization for every user but the authorizer's own
//   key (auth_users) and lets the callout place users in any account
//   (allowed_accounts "*": the installations' accounts come and go without
//   touching it). default_sentinel is a bearer user of this account, so a
//   username/password CONNECT lands here and goes to the callout;
// - one account per installation, named <namespace>/<name>, with the
//   installation's limits and the one installation signing key, which the
//   authorizer signs every installation's users with (issuer_account = the
//   installation's account; authorizer::OperatorModeSigner): its key
//   material does not grow with installations.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "switchboard/api/constants.h"
#include "switchboard/api/views.h"
#include "switchboard/common/status.h"
#include "switchboard/natsauth/jwt.h"
#include "switchboard/natsauth/operator_jwt.h"

namespace switchboard::operator_logic {

// The public keys of one NatsServer's operator-mode installation.
struct OperatorModeKeys {
  std::string operator_key;              // O...
  std::string system_account;            // A...
  std::string auth_account;              // A...: also signs the callout's responses
  std::string authorizer_user;           // U...: the authorizer's own user, in auth_users
  std::string installation_signing_key;  // A...: signs every installation's users
};

// The operator JWT: self-signed, system_account set (the server's
// system_account must be the same key).
natsauth::OperatorClaims OperatorClaimsFor(const OperatorModeKeys& keys, int64_t issued_at);
// SYS and SWITCHBOARD_AUTH, unlimited apart from what the format turns off
// (leaf nodes, imports, exports, JetStream).
natsauth::AccountClaims SystemAccountClaims(const OperatorModeKeys& keys, int64_t issued_at);
natsauth::AccountClaims AuthAccountClaims(const OperatorModeKeys& keys, int64_t issued_at);
// default_sentinel: a bearer user of the auth account (signed with its
// key) that may neither publish nor subscribe; its subject is any user key
// (the sentinel is never a live connection: the callout replaces it).
natsauth::UserClaims SentinelClaims(std::string_view sentinel_user, int64_t issued_at);

// The account of one installation (PubSubBackend namespace/name).
struct InstallationAccountInput {
  std::string ns, name;
  std::string account;             // its account public key (A...)
  api::InstallationLimits limits;  // EffectiveLimits (limits.h); none = unlimited
};
// Name <namespace>/<name>, the installation signing key, the limits (none
// = unlimited). Refuses (kInvalidArgument naming the field and the fix) an
// account that is not an account key or is one of the fixed accounts, a
// signing key that is not one, and a limit the API refuses
// (api::CheckMaxConnections, CheckMaxSubscriptions, CheckMaxPayload: the
// engine refuses to start below 16 MiB).
Result<natsauth::AccountClaims> InstallationAccountClaims(const InstallationAccountInput& input,
                                                          const OperatorModeKeys& keys,
                                                          int64_t issued_at);

}  // namespace switchboard::operator_logic
