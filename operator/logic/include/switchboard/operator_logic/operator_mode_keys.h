// The key material of AuthCallout with isolation: Accounts (NATS operator
// mode), kept beside the callout keys in the NatsServer's callout Secret
// (<server>-auth-callout, owned, managed-by label, never logged). The
// callout's issuer seed is the auth account's seed: the auth account signs
// the callout's responses, which is what the issuer does in config mode,
// and the authorizer already reads that Secret.
//
// Installation accounts are not stored anywhere: each one's key pair is
// derived from the installation signing seed and the installation's
// namespace/name (InstallationAccountKey), so the operator (which pushes the
// account JWT) and every authorizer replica (which names the account in
// the user JWT) compute the same key from cluster state alone. Keyed by
// namespace/name rather than uid because the authorizer's decision carries
// namespace/name; a backend deleted and created again under the same name
// gets the same account (its account was deleted with it, and is pushed
// again).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "switchboard/common/status.h"
#include "switchboard/natsauth/nkey.h"
#include "switchboard/operator_logic/env.h"
#include "switchboard/operator_logic/operator_mode_claims.h"

namespace switchboard::operator_logic {

// The callout Secret's further keys in operator mode. Seeds are secrets.
namespace operator_mode_keys {
inline constexpr std::string_view kOperatorSeed = "operator-seed";                         // SO...
inline constexpr std::string_view kSystemAccountSeed = "system-account-seed";              // SA...
inline constexpr std::string_view kSystemUserSeed = "system-user-seed";                    // SU...
inline constexpr std::string_view kAuthorizerUserSeed = "authorizer-user-seed";            // SU...
inline constexpr std::string_view kInstallationSigningSeed = "installation-signing-seed";  // SA
// Public: the default_sentinel's subject (a user key nobody holds the seed
// of) and the second every fixed JWT is issued at, so the static config is
// the same bytes on every render.
inline constexpr std::string_view kSentinelUser = "sentinel-user";  // U...
inline constexpr std::string_view kIssuedAt = "issued-at";          // unix seconds
}  // namespace operator_mode_keys

struct OperatorModeSeeds {
  std::string operator_seed, system_account_seed, system_user_seed, authorizer_user_seed,
      installation_signing_seed;  // secrets
  std::string sentinel_user;
  int64_t issued_at = 0;
  bool operator==(const OperatorModeSeeds&) const = default;
};

// The keys above only; merge into the callout keys' data.
SecretData EncodeOperatorModeSeeds(const OperatorModeSeeds& seeds);

struct OperatorModeSeedsPlan {
  OperatorModeSeeds seeds;
  bool changed = false;  // something was generated
  std::string note;      // what was generated, for the log; never a secret
};
// Keeps what is stored and valid; generates only what is missing (issued_at
// = `now` when missing). A stored seed of the wrong kind, or one that does
// not decode, fails (kInvalidArgument naming the key, never its value)
// rather than being replaced: the servers' static config names the
// operator, the system account and the auth users, and a replaced
// installation signing key would strand every installation's account.
Result<OperatorModeSeedsPlan> PlanOperatorModeSeeds(const std::optional<SecretData>& stored,
                                                    int64_t now);

// The key pairs, decoded once (an authorizer or a sync step keeps them).
struct OperatorModeKeyPairs {
  natsauth::KeyPair operator_key, system_account, system_user, auth_account, authorizer_user,
      installation_signing;
  std::string sentinel_user;
  int64_t issued_at = 0;
  OperatorModeKeys Public() const;
};
// `auth_account_seed` is the callout Secret's issuer seed. kInvalidArgument
// naming the key at fault.
Result<OperatorModeKeyPairs> DecodeOperatorModeKeyPairs(const OperatorModeSeeds& seeds,
                                                        std::string_view auth_account_seed);
// Every operator-mode key of `data`, present and of the right kind.
Result<OperatorModeSeeds> DecodeOperatorModeSeeds(const SecretData& data);

// The account key pair of installation <ns>/<name>: derived from the
// installation signing seed (natsauth::DeriveKeyPair over
// "switchboard installation account\0<ns>/<name>").
Result<natsauth::KeyPair> InstallationAccountKey(const natsauth::KeyPair& installation_signing,
                                                 std::string_view ns, std::string_view name);

// The account key of installation <ns>/<name> from the callout Secret's
// data (its installation signing seed): what the backend's status shows.
// kFailedPrecondition when the seed is missing or does not decode (the
// server's reconcile has not written it yet).
Result<std::string> InstallationAccountOf(const SecretData& callout_data, std::string_view ns,
                                          std::string_view name);

// The static JWTs of the config, all issued at keys.issued_at: what
// RenderOperatorModeConfig takes.
struct OperatorModeJwts {
  std::string operator_jwt, system_account_jwt, auth_account_jwt, sentinel_jwt;
};
Result<OperatorModeJwts> EncodeOperatorModeJwts(const OperatorModeKeyPairs& keys);

// The user JWTs the operator's system connection and the authorizer's
// connection present (name "switchboard-system" / "switchboard-authorizer",
// issued at `now`, signed by their account's key).
Result<std::string> SystemUserJwt(const OperatorModeKeyPairs& keys, int64_t now);
Result<std::string> AuthorizerUserJwt(const OperatorModeKeyPairs& keys, int64_t now);

}  // namespace switchboard::operator_logic
