#include "switchboard/operator_logic/operator_mode_claims.h"

#include "switchboard/api/values.h"
#include "switchboard/natsauth/nkey.h"

namespace switchboard::operator_logic {
namespace {

using natsauth::KeyType;

Status BadKey(std::string_view field, std::string_view kind) {
  return Status::InvalidArgument(std::string(field) + ": not " + std::string(kind) +
                                 "; check the operator-mode Secret's keys");
}

// A limit for the account JWT: kNoLimit when unset, else `value` if the
// API's `check` of it passes.
Result<int64_t> Limit(const std::optional<int64_t>& value, std::string_view field,
                      std::string (*check)(int64_t)) {
  if (!value) return natsauth::kNoLimit;
  if (auto why = check(*value); !why.empty()) {
    return Status::InvalidArgument(std::string(field) + ": " + why);
  }
  return *value;
}

}  // namespace

natsauth::OperatorClaims OperatorClaimsFor(const OperatorModeKeys& keys, int64_t issued_at) {
  natsauth::OperatorClaims op;
  op.claims = {.issued_at = issued_at, .name = "switchboard", .subject = keys.operator_key};
  op.system_account = keys.system_account;
  return op;
}

natsauth::AccountClaims SystemAccountClaims(const OperatorModeKeys& keys, int64_t issued_at) {
  natsauth::AccountClaims a;
  a.claims = {.issued_at = issued_at,
              .name = std::string(api::kCalloutSystemAccount),
              .subject = keys.system_account};
  return a;
}

natsauth::AccountClaims AuthAccountClaims(const OperatorModeKeys& keys, int64_t issued_at) {
  natsauth::AccountClaims a;
  a.claims = {.issued_at = issued_at,
              .name = std::string(api::kCalloutAuthAccount),
              .subject = keys.auth_account};
  a.authorization.auth_users = {keys.authorizer_user};
  a.authorization.allowed_accounts = {"*"};
  return a;
}

natsauth::UserClaims SentinelClaims(std::string_view sentinel_user, int64_t issued_at) {
  natsauth::UserClaims u;
  u.claims = {
      .issued_at = issued_at, .name = "default_sentinel", .subject = std::string(sentinel_user)};
  u.bearer_token = true;
  u.pub.deny = u.sub.deny = {">"};
  return u;
}

Result<natsauth::AccountClaims> InstallationAccountClaims(const InstallationAccountInput& in,
                                                          const OperatorModeKeys& keys,
                                                          int64_t issued_at) {
  const std::string where = "installation " + in.ns + "/" + in.name;
  if (!natsauth::IsPublicKey(in.account, KeyType::kAccount)) {
    return BadKey(where + " account", "an account public key (A...)");
  }
  if (in.account == keys.system_account || in.account == keys.auth_account ||
      in.account == keys.installation_signing_key) {
    return Status::InvalidArgument(where +
                                   " account: is one of the server's own keys (system, auth or "
                                   "signing); give the installation a key of its own");
  }
  if (!natsauth::IsPublicKey(keys.installation_signing_key, KeyType::kAccount)) {
    return BadKey("installation signing key", "an account public key (A...)");
  }
  natsauth::AccountClaims a;
  a.claims = {.issued_at = issued_at, .name = in.ns + "/" + in.name, .subject = in.account};
  a.signing_keys = {keys.installation_signing_key};
  auto conn = Limit(in.limits.max_connections, "maxConnections", api::CheckMaxConnections);
  if (!conn.ok()) return conn.status().Annotate(where);
  auto subs = Limit(in.limits.max_subscriptions, "maxSubscriptions", api::CheckMaxSubscriptions);
  if (!subs.ok()) return subs.status().Annotate(where);
  auto payload = Limit(in.limits.max_payload, "maxPayload", api::CheckMaxPayload);
  if (!payload.ok()) return payload.status().Annotate(where);
  a.limits.conn = *conn;
  a.limits.subs = *subs;
  if (in.limits.max_payload) a.limits.payload = *payload;
  return a;
}

}  // namespace switchboard::operator_logic
