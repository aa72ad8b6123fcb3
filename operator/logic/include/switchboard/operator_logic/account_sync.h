// Which account JWTs to push to a full resolver and which to delete, from
// what should be there and what is: level-based, so after a server or a
// whole-cluster restart (an emptyDir store is lost) the same function finds
// what is missing or stale, with no memory of earlier pushes.
//
// The resolver answers $SYS.REQ.CLAIMS.LIST with the account keys it holds
// and $SYS.REQ.ACCOUNT.<key>.CLAIMS.LOOKUP with one account's JWT. A JWT is
// re-signed (new iat and jti) whenever it is encoded, so freshness is
// judged on the claims that matter, never on the token's bytes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/natsauth/operator_jwt.h"

namespace switchboard::operator_logic {

struct AccountSyncInput {
  // Every account that should be there, by account public key (the
  // installations'; the preloaded fixed accounts may be included too).
  std::map<std::string, natsauth::AccountClaims> desired;
  // Keys never deleted even when not desired: the system and auth accounts.
  std::set<std::string> keep;
  // What the resolver holds, by key: the JWT when it was looked up,
  // nullopt when only listed.
  std::map<std::string, std::optional<std::string>> stored;
  // The operator key the JWTs must be signed with (or one of
  // signing_keys).
  std::string operator_key;
  std::vector<std::string> operator_signing_keys;
  int64_t now = 0;
};

enum class AccountPushReason {
  kMissing,     // not stored
  kStale,       // stored with other limits, signing keys, name or authorization
  kUnreadable,  // stored JWT does not decode, is expired, or is signed by another operator
};

struct AccountPush {
  std::string account;
  AccountPushReason reason;
  bool operator==(const AccountPush&) const = default;
};

// Each list sorted by key.
struct AccountSyncPlan {
  std::vector<AccountPush> push;  // encode the desired claims and send them
  // Stored keys neither desired nor kept: delete them (one
  // $SYS.REQ.CLAIMS.DELETE can carry many).
  std::vector<std::string> remove;
  // Desired keys that are listed but whose JWT was not looked up: look
  // them up and plan again (a plan over a listing alone pushes only what is
  // missing).
  std::vector<std::string> look_up;
  bool empty() const { return push.empty() && remove.empty() && look_up.empty(); }
};

AccountSyncPlan PlanAccountSync(const AccountSyncInput& input);

// True when two account claims carry the same content: subject, name,
// limits, signing keys (as sets) and authorization; iat, jti and the
// issuer are not compared.
bool SameAccountContent(const natsauth::AccountClaims& a, const natsauth::AccountClaims& b);

// A NATS server's own lookup of an account it cannot resolve: a full
// resolver that lacks an account JWT (a client, or an auth callout answer,
// names it) sends $SYS.REQ.ACCOUNT.<key>.CLAIMS.LOOKUP with a reply subject
// in the server's own inbox ("$SYS._INBOX.<server hash>.<id>") and takes
// the first reply with a JWT it can verify (signed by the operator), from
// any responder. The account key when `subject` and `reply` are such a
// lookup; nullopt for anything else, a client's lookup (its reply subject
// is a client inbox, "_INBOX.") included: those ask what the servers
// store, which only the servers can answer.
std::optional<std::string> ServerAccountLookup(std::string_view subject, std::string_view reply);

}  // namespace switchboard::operator_logic
