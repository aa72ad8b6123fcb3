#include "switchboard/natsauth/operator_jwt.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "claims_codec.h"

namespace switchboard::natsauth {

using namespace internal;

namespace {

constexpr std::string_view kAnyAccount = "*";

Status RequireKeys(const std::vector<std::string>& keys, KeyType type, std::string_view what,
                   std::string_view claim) {
  for (const auto& key : keys) SB_RETURN_IF_ERROR(RequireKey(key, type, what, claim));
  return Status::Ok();
}

std::vector<std::string> SortedUnique(std::vector<std::string> keys) {
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

Status CheckLimit(int64_t value, std::string_view claim) {
  if (value >= kNoLimit) return Status::Ok();
  return Status::InvalidArgument("account JWT: limits." + std::string(claim) + " is " +
                                 std::to_string(value) + "; use -1 for unlimited or a count");
}

Status CheckAuthorization(const ExternalAuthorization& a, std::string_view what) {
  SB_RETURN_IF_ERROR(RequireKeys(a.auth_users, KeyType::kUser, what, "authorization.auth_users[]"));
  if (!a.allowed_accounts.empty() && a.auth_users.empty()) {
    return Status::InvalidArgument(std::string(what) +
                                   ": authorization.allowed_accounts needs auth_users (the "
                                   "callout service's own user keys)");
  }
  for (const auto& account : a.allowed_accounts) {
    if (account == kAnyAccount) {
      if (a.allowed_accounts.size() > 1) {
        return Status::InvalidArgument(std::string(what) +
                                       ": authorization.allowed_accounts is either \"*\" alone "
                                       "or a list of account keys");
      }
      continue;
    }
    SB_RETURN_IF_ERROR(
        RequireKey(account, KeyType::kAccount, what, "authorization.allowed_accounts[]"));
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> EncodeOperatorClaims(const OperatorClaims& op, const KeyPair& operator_key) {
  constexpr std::string_view kWhat = "operator JWT";
  SB_RETURN_IF_ERROR(RequireKey(operator_key.public_key(), KeyType::kOperator, kWhat, "the key"));
  ClaimsData claims = op.claims;
  if (claims.subject.empty()) claims.subject = operator_key.public_key();
  if (claims.subject != operator_key.public_key()) {
    return Status::InvalidArgument(
        "operator JWT: sub must be the signing operator key (an operator JWT is self-signed)");
  }
  SB_RETURN_IF_ERROR(RequireKeys(op.signing_keys, KeyType::kOperator, kWhat, "signing_keys[]"));
  if (!op.system_account.empty()) {
    SB_RETURN_IF_ERROR(RequireKey(op.system_account, KeyType::kAccount, kWhat, "system_account"));
  }
  ordered_json nats = ordered_json::object();
  // jwt/v2 keeps the operator's signing keys in the order given.
  if (!op.signing_keys.empty()) nats["signing_keys"] = op.signing_keys;
  if (!op.system_account.empty()) nats["system_account"] = op.system_account;
  nats["type"] = "operator";
  return Encode(std::move(claims), std::move(nats), operator_key, kWhat);
}

Result<std::string> EncodeAccountClaims(const AccountClaims& account, const KeyPair& operator_key) {
  constexpr std::string_view kWhat = "account JWT";
  SB_RETURN_IF_ERROR(RequireKey(account.claims.subject, KeyType::kAccount, kWhat, "sub"));
  SB_RETURN_IF_ERROR(
      RequireKey(operator_key.public_key(), KeyType::kOperator, kWhat, "the issuer"));
  SB_RETURN_IF_ERROR(RequireKeys(account.signing_keys, KeyType::kAccount, kWhat, "signing_keys[]"));
  SB_RETURN_IF_ERROR(CheckAuthorization(account.authorization, kWhat));
  const AccountLimits& l = account.limits;
  SB_RETURN_IF_ERROR(CheckLimit(l.subs, "subs"));
  SB_RETURN_IF_ERROR(CheckLimit(l.data, "data"));
  SB_RETURN_IF_ERROR(CheckLimit(l.payload, "payload"));
  SB_RETURN_IF_ERROR(CheckLimit(l.conn, "conn"));

  // OperatorLimits' fields in jwt/v2's order, each omitted when zero:
  // imports, exports, leaf and every JetStream limit are zero (none, off).
  ordered_json limits = ordered_json::object();
  if (l.subs != 0) limits["subs"] = l.subs;
  if (l.data != 0) limits["data"] = l.data;
  if (l.payload != 0) limits["payload"] = l.payload;
  if (l.conn != 0) limits["conn"] = l.conn;
  ordered_json authorization = ordered_json::object();
  if (!account.authorization.auth_users.empty()) {
    authorization["auth_users"] = account.authorization.auth_users;
  }
  if (!account.authorization.allowed_accounts.empty()) {
    authorization["allowed_accounts"] = account.authorization.allowed_accounts;
  }
  ordered_json nats = ordered_json::object();
  nats["limits"] = std::move(limits);
  if (!account.signing_keys.empty()) nats["signing_keys"] = SortedUnique(account.signing_keys);
  nats["default_permissions"] = {{"pub", ordered_json::object()}, {"sub", ordered_json::object()}};
  nats["authorization"] = std::move(authorization);
  nats["type"] = "account";
  return Encode(account.claims, std::move(nats), operator_key, kWhat);
}

Result<std::string> EncodeAccountDeleteRequest(const std::vector<std::string>& accounts,
                                               const KeyPair& operator_key, int64_t now) {
  constexpr std::string_view kWhat = "account delete request";
  SB_RETURN_IF_ERROR(RequireKey(operator_key.public_key(), KeyType::kOperator, kWhat, "the key"));
  if (accounts.empty()) {
    return Status::InvalidArgument("account delete request: no account to delete");
  }
  SB_RETURN_IF_ERROR(RequireKeys(accounts, KeyType::kAccount, kWhat, "accounts[]"));
  ClaimsData claims;
  claims.issued_at = now;
  claims.subject = operator_key.public_key();
  // jwt/v2's GenericClaims: a map, so its keys in sorted order.
  ordered_json nats = ordered_json::object();
  nats["accounts"] = accounts;
  return Encode(std::move(claims), std::move(nats), operator_key, kWhat);
}

Result<OperatorClaims> DecodeOperatorClaims(std::string_view token, int64_t now) {
  constexpr std::string_view kWhat = "operator JWT";
  auto v = DecodeVerified(token, "operator", KeyType::kOperator, now, kWhat);
  if (!v.ok()) return v.status();
  OperatorClaims op;
  op.claims = std::move(v->claims);
  if (op.claims.subject != op.claims.issuer) {
    return Status::InvalidArgument("operator JWT: not self-signed (sub is not iss)");
  }
  Reader nr(&v->body["nats"], "nats");
  SB_RETURN_IF_ERROR(nr.Strings("signing_keys", &op.signing_keys).Annotate(kWhat));
  SB_RETURN_IF_ERROR(nr.Str("system_account", &op.system_account).Annotate(kWhat));
  SB_RETURN_IF_ERROR(RequireKeys(op.signing_keys, KeyType::kOperator, kWhat, "signing_keys[]"));
  if (!op.system_account.empty()) {
    SB_RETURN_IF_ERROR(RequireKey(op.system_account, KeyType::kAccount, kWhat, "system_account"));
  }
  return op;
}

Result<AccountClaims> DecodeAccountClaims(std::string_view token, int64_t now) {
  constexpr std::string_view kWhat = "account JWT";
  auto v = DecodeVerified(token, "account", KeyType::kOperator, now, kWhat);
  if (!v.ok()) return v.status();
  AccountClaims a;
  a.claims = std::move(v->claims);
  SB_RETURN_IF_ERROR(RequireKey(a.claims.subject, KeyType::kAccount, kWhat, "sub"));
  Reader nr(&v->body["nats"], "nats");
  // Absent limits read as 0, as in jwt/v2.
  a.limits = {.subs = 0, .data = 0, .payload = 0, .conn = 0};
  auto limits = nr.Object("limits");
  if (!limits.ok()) return limits.status().Annotate(kWhat);
  Reader lr = nr.Sub(*limits, "limits");
  SB_RETURN_IF_ERROR(lr.Int("subs", &a.limits.subs).Annotate(kWhat));
  SB_RETURN_IF_ERROR(lr.Int("data", &a.limits.data).Annotate(kWhat));
  SB_RETURN_IF_ERROR(lr.Int("payload", &a.limits.payload).Annotate(kWhat));
  SB_RETURN_IF_ERROR(lr.Int("conn", &a.limits.conn).Annotate(kWhat));
  SB_RETURN_IF_ERROR(nr.Strings("signing_keys", &a.signing_keys).Annotate(kWhat));
  SB_RETURN_IF_ERROR(RequireKeys(a.signing_keys, KeyType::kAccount, kWhat, "signing_keys[]"));
  auto auth = nr.Object("authorization");
  if (!auth.ok()) return auth.status().Annotate(kWhat);
  Reader ar = nr.Sub(*auth, "authorization");
  SB_RETURN_IF_ERROR(ar.Strings("auth_users", &a.authorization.auth_users).Annotate(kWhat));
  SB_RETURN_IF_ERROR(
      ar.Strings("allowed_accounts", &a.authorization.allowed_accounts).Annotate(kWhat));
  SB_RETURN_IF_ERROR(CheckAuthorization(a.authorization, kWhat));
  return a;
}

}  // namespace switchboard::natsauth
