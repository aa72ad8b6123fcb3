// The JWTs of NATS operator mode (nats-io/jwt v2): the operator JWT a
// server trusts, the account JWTs it resolves, and the request that deletes
// accounts from a full resolver. The user JWTs of operator mode (the
// default_sentinel bearer token, a callout answer with issuer_account) are
// UserClaims of jwt.h.
//
// Trust runs operator -> account -> user: the operator key signs its own
// JWT and every account JWT; an account's key, or a signing key listed in
// its JWT, signs its users. Claims are written in jwt/v2's field order with
// Go's escaping, so a token signed here is byte for byte the one jwt/v2
// would sign with the same key at the same second. Time is an argument.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/common/status.h"
#include "switchboard/natsauth/jwt.h"
#include "switchboard/natsauth/nkey.h"

namespace switchboard::natsauth {

// The operator JWT (the server's `operator`): self-signed, subject = issuer =
// the operator key.
struct OperatorClaims {
  ClaimsData claims;                      // subject is set from the key when encoding
  std::vector<std::string> signing_keys;  // further operator keys (O...) that may sign accounts
  std::string system_account;             // the system account's key (A...); the server's
                                          // system_account must equal it
};

// An account's limits. The server enforces conn across the cluster and
// subs and payload per connection (the lower of account, user and
// server); kNoLimit is unlimited, and an absent limit reads as 0, which
// for conn means no connection at all, so every one is always written.
// Leaf node connections, imports and exports are 0 (none: the server adds
// its own system imports regardless) and JetStream is off (no storage);
// they are not settable here.
struct AccountLimits {
  int64_t subs = kNoLimit;     // subscriptions per connection
  int64_t data = kNoLimit;     // not enforced by the server; written as jwt/v2's default
  int64_t payload = kNoLimit;  // bytes per message, per connection
  int64_t conn = kNoLimit;     // client connections of the account, cluster-wide
  bool operator==(const AccountLimits&) const = default;
};

// Enables the auth callout for users of an account (the account the
// default_sentinel belongs to): auth_users are the user keys (U...) that
// bypass it (the authorizer's own), allowed_accounts the account keys the
// callout may place users into, or exactly {"*"} for any.
struct ExternalAuthorization {
  std::vector<std::string> auth_users;
  std::vector<std::string> allowed_accounts;
  bool operator==(const ExternalAuthorization&) const = default;
};

// An account JWT, signed by the operator key (or one of its signing keys).
// subject = the account key; claims.name is shown in the server's
// monitoring (accountz, connz account_name).
struct AccountClaims {
  ClaimsData claims;
  AccountLimits limits;
  // Account keys (A...) that may sign this account's users (with
  // issuer_account = this account); written sorted, as jwt/v2 does.
  std::vector<std::string> signing_keys;
  ExternalAuthorization authorization;
};

// Refuses (kInvalidArgument, naming the claim) a key that is not an
// operator key, a subject other than the key, signing keys that are not
// operator keys and a system account that is not an account key.
Result<std::string> EncodeOperatorClaims(const OperatorClaims& op, const KeyPair& operator_key);
// Refuses a subject that is not an account key, an issuer that is not an
// operator key, signing keys and allowed accounts that are not account
// keys (or "*" alone), auth users that are not user keys, allowed accounts
// without auth users, and a limit below kNoLimit.
Result<std::string> EncodeAccountClaims(const AccountClaims& account, const KeyPair& operator_key);
// $SYS.REQ.CLAIMS.DELETE's body: a JWT self-signed by the operator key whose
// nats.accounts lists the account keys to delete (a full resolver with
// allow_delete removes them and the server closes their connections).
// iat = now. Refuses an empty list and keys that are not account keys.
Result<std::string> EncodeAccountDeleteRequest(const std::vector<std::string>& accounts,
                                               const KeyPair& operator_key, int64_t now);

// The checks of jwt.h's decoders (header, nats.type and version, the
// issuer's kind and signature, exp and nbf), then: the operator JWT is
// self-signed; an account JWT's issuer is an operator key (whether it is a
// trusted one is the caller's question) and its subject an account key.
Result<OperatorClaims> DecodeOperatorClaims(std::string_view token, int64_t now);
Result<AccountClaims> DecodeAccountClaims(std::string_view token, int64_t now);

}  // namespace switchboard::natsauth
