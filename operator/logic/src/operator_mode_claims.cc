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

Result<int64_t> Count(const std::optional<int64_t>& value, std::string_view field) {
  if (!value) return natsauth::kNoLimit;
  if (*value < 1) {
    return Status::InvalidArgument(std::string(field) + ": " + std::to_string(*value) +
                                   " is below 1; leave it unset for no limit");
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
  auto conn = Count(in.limits.max_connections, "maxConnections");
  if (!conn.ok()) return conn.status().Annotate(where);
  auto subs = Count(in.limits.max_subscriptions, "maxSubscriptions");
  if (!subs.ok()) return subs.status().Annotate(where);
  a.limits.conn = *conn;
  a.limits.subs = *subs;
  if (in.limits.max_payload) {
    if (auto why = api::CheckMaxPayload(*in.limits.max_payload); !why.empty()) {
      return Status::InvalidArgument(where + ": maxPayload: " + why);
    }
    a.limits.payload = *in.limits.max_payload;
  }
  return a;
}

}  // namespace switchboard::operator_logic
