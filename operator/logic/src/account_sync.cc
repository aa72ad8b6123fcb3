#include "switchboard/operator_logic/account_sync.h"

#include <algorithm>

namespace switchboard::operator_logic {
namespace {

std::vector<std::string> Sorted(std::vector<std::string> keys) {
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

bool TrustedIssuer(const AccountSyncInput& in, const std::string& issuer) {
  return issuer == in.operator_key ||
         std::find(in.operator_signing_keys.begin(), in.operator_signing_keys.end(), issuer) !=
             in.operator_signing_keys.end();
}

}  // namespace

bool SameAccountContent(const natsauth::AccountClaims& a, const natsauth::AccountClaims& b) {
  return a.claims.subject == b.claims.subject && a.claims.name == b.claims.name &&
         a.limits == b.limits && Sorted(a.signing_keys) == Sorted(b.signing_keys) &&
         a.authorization == b.authorization;
}

AccountSyncPlan PlanAccountSync(const AccountSyncInput& in) {
  AccountSyncPlan plan;
  // std::map iterates in key order: every list comes out sorted.
  for (const auto& [key, want] : in.desired) {
    auto it = in.stored.find(key);
    if (it == in.stored.end()) {
      plan.push.push_back({key, AccountPushReason::kMissing});
      continue;
    }
    if (!it->second) {
      plan.look_up.push_back(key);
      continue;
    }
    auto have = natsauth::DecodeAccountClaims(*it->second, in.now);
    if (!have.ok() || have->claims.subject != key || !TrustedIssuer(in, have->claims.issuer)) {
      plan.push.push_back({key, AccountPushReason::kUnreadable});
    } else if (!SameAccountContent(*have, want)) {
      plan.push.push_back({key, AccountPushReason::kStale});
    }
  }
  for (const auto& [key, jwt] : in.stored) {
    if (in.desired.count(key) == 0 && in.keep.count(key) == 0) plan.remove.push_back(key);
  }
  return plan;
}

std::optional<std::string> ServerAccountLookup(std::string_view subject, std::string_view reply) {
  constexpr std::string_view kPrefix = "$SYS.REQ.ACCOUNT.", kSuffix = ".CLAIMS.LOOKUP",
                             kServerInbox = "$SYS._INBOX.";
  if (!reply.starts_with(kServerInbox)) return std::nullopt;
  if (!subject.starts_with(kPrefix) || !subject.ends_with(kSuffix)) return std::nullopt;
  if (subject.size() <= kPrefix.size() + kSuffix.size()) return std::nullopt;
  std::string_view key =
      subject.substr(kPrefix.size(), subject.size() - kPrefix.size() - kSuffix.size());
  // One token, an account public key: 56 characters starting with 'A'.
  if (key.size() != 56 || key[0] != 'A' || key.find('.') != std::string_view::npos) {
    return std::nullopt;
  }
  return std::string(key);
}

}  // namespace switchboard::operator_logic
