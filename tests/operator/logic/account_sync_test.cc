// PlanAccountSync: what to push to a full resolver and what to delete,
// from the desired accounts and the resolver's listing and lookups.
#include "switchboard/operator_logic/account_sync.h"

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "switchboard/natsauth/nkey.h"
#include "switchboard/natsauth/operator_jwt.h"

namespace switchboard::operator_logic {
namespace {

using natsauth::AccountClaims;
using natsauth::KeyPair;
using natsauth::KeyType;
using R = AccountPushReason;

constexpr int64_t kNow = 1'780'000'000;

KeyPair Key(KeyType type) { return KeyPair::Generate(type).value(); }

struct Fixture {
  KeyPair op = Key(KeyType::kOperator), other_op = Key(KeyType::kOperator);
  std::string sk = Key(KeyType::kAccount).public_key();
  // Keys sorted, so each plan's order is a, b, c, sys.
  std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (int i = 0; i < 4; ++i) k.push_back(Key(KeyType::kAccount).public_key());
    std::sort(k.begin(), k.end());
    return k;
  }();
  const std::string &a = keys[0], &b = keys[1], &c = keys[2], &sys = keys[3];

  AccountClaims Claims(const std::string& key, int64_t conn = -1) const {
    AccountClaims x;
    x.claims = {.issued_at = kNow, .name = "ns/" + key.substr(0, 6), .subject = key};
    x.limits.conn = conn;
    x.signing_keys = {sk};
    return x;
  }
  std::string Jwt(const AccountClaims& x, const KeyPair& by) const {
    return natsauth::EncodeAccountClaims(x, by).value();
  }
  AccountSyncInput Input() const {
    AccountSyncInput in;
    in.desired = {{a, Claims(a)}, {b, Claims(b, 5)}};
    in.keep = {sys};
    in.operator_key = op.public_key();
    in.now = kNow;
    return in;
  }
};

TEST(AccountSyncTest, Table) {
  Fixture f;
  struct Case {
    std::string name;
    std::function<void(AccountSyncInput&)> setup;
    std::vector<AccountPush> push;
    std::vector<std::string> remove, look_up;
  };
  std::vector<Case> cases = {
      {"empty resolver (a restart lost the store): push everything",
       [](auto&) {},
       {{f.a, R::kMissing}, {f.b, R::kMissing}},
       {},
       {}},
      {"in step",
       [&](auto& in) {
         in.stored = {{f.a, f.Jwt(f.Claims(f.a), f.op)},
                      {f.b, f.Jwt(f.Claims(f.b, 5), f.op)},
                      {f.sys, std::nullopt}};
       },
       {},
       {},
       {}},
      {"re-signed later with the same content: nothing to do",
       [&](auto& in) {
         AccountClaims later = f.Claims(f.a);
         later.claims.issued_at = kNow + 3600;
         in.stored = {{f.a, f.Jwt(later, f.op)}, {f.b, f.Jwt(f.Claims(f.b, 5), f.op)}};
       },
       {},
       {},
       {}},
      {"a limit changed: stale",
       [&](auto& in) {
         in.stored = {{f.a, f.Jwt(f.Claims(f.a), f.op)}, {f.b, f.Jwt(f.Claims(f.b, 4), f.op)}};
       },
       {{f.b, R::kStale}},
       {},
       {}},
      {"signing key changed: stale",
       [&](auto& in) {
         AccountClaims old = f.Claims(f.a);
         old.signing_keys = {Key(KeyType::kAccount).public_key()};
         in.stored = {{f.a, f.Jwt(old, f.op)}, {f.b, f.Jwt(f.Claims(f.b, 5), f.op)}};
       },
       {{f.a, R::kStale}},
       {},
       {}},
      {"signed by another operator, or garbage: unreadable",
       [&](auto& in) {
         in.stored = {{f.a, f.Jwt(f.Claims(f.a), f.other_op)}, {f.b, std::string("x.y.z")}};
       },
       {{f.a, R::kUnreadable}, {f.b, R::kUnreadable}},
       {},
       {}},
      {"an operator signing key is trusted",
       [&](auto& in) {
         in.operator_signing_keys = {f.other_op.public_key()};
         in.stored = {{f.a, f.Jwt(f.Claims(f.a), f.other_op)},
                      {f.b, f.Jwt(f.Claims(f.b, 5), f.op)}};
       },
       {},
       {},
       {}},
      {"stored under another key than its subject: unreadable",
       [&](auto& in) {
         in.stored = {{f.a, f.Jwt(f.Claims(f.b, 5), f.op)}, {f.b, f.Jwt(f.Claims(f.b, 5), f.op)}};
       },
       {{f.a, R::kUnreadable}},
       {},
       {}},
      {"listed only: look them up, push what is missing",
       [&](auto& in) {
         in.stored = {{f.a, std::nullopt}};
       },
       {{f.b, R::kMissing}},
       {},
       {f.a}},
      {"a deleted installation's account goes; kept accounts stay",
       [&](auto& in) {
         in.stored = {{f.a, f.Jwt(f.Claims(f.a), f.op)},
                      {f.b, f.Jwt(f.Claims(f.b, 5), f.op)},
                      {f.c, std::nullopt},
                      {f.sys, std::nullopt}};
       },
       {},
       {f.c},
       {}},
      {"nothing desired: everything but the kept goes",
       [&](auto& in) {
         in.desired.clear();
         in.stored = {{f.a, std::nullopt}, {f.sys, std::nullopt}};
       },
       {},
       {f.a},
       {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    AccountSyncInput in = f.Input();
    c.setup(in);
    AccountSyncPlan plan = PlanAccountSync(in);
    EXPECT_EQ(plan.push, c.push);
    EXPECT_EQ(plan.remove, c.remove);
    EXPECT_EQ(plan.look_up, c.look_up);
    EXPECT_EQ(plan.empty(), c.push.empty() && c.remove.empty() && c.look_up.empty());
  }
}

TEST(AccountSyncTest, SameContentIgnoresTimeAndOrder) {
  Fixture f;
  AccountClaims x = f.Claims(f.a, 3);
  x.signing_keys = {f.a, f.b};
  AccountClaims y = x;
  y.claims.issued_at = kNow + 10;
  y.claims.id = "other";
  y.signing_keys = {f.b, f.a};
  EXPECT_TRUE(SameAccountContent(x, y));
  y.claims.name = "renamed";
  EXPECT_FALSE(SameAccountContent(x, y));
  y = x;
  y.limits.payload = 16 * 1024 * 1024;
  EXPECT_FALSE(SameAccountContent(x, y));
  y = x;
  y.authorization.auth_users = {Key(KeyType::kUser).public_key()};
  EXPECT_FALSE(SameAccountContent(x, y));
}

TEST(AccountSyncTest, ServerAccountLookup) {
  const std::string key = Key(KeyType::kAccount).public_key();
  const std::string lookup = "$SYS.REQ.ACCOUNT." + key + ".CLAIMS.LOOKUP";
  const std::string server_inbox = "$SYS._INBOX.QOWg2Nqq.Zx3vU9";
  struct Row {
    std::string name, subject, reply;
    std::optional<std::string> want;
  };
  const std::vector<Row> rows = {
      {"a server's fetch", lookup, server_inbox, key},
      {"a client's lookup: only servers know what they store", lookup, "_INBOX.abc.1", {}},
      {"no reply subject", lookup, "", {}},
      {"another request", "$SYS.REQ.ACCOUNT." + key + ".CLAIMS.UPDATE", server_inbox, {}},
      {"the list", "$SYS.REQ.CLAIMS.LIST", server_inbox, {}},
      {"not an account key", "$SYS.REQ.ACCOUNT.PING.CLAIMS.LOOKUP", server_inbox, {}},
      {"a user key", "$SYS.REQ.ACCOUNT.U" + key.substr(1) + ".CLAIMS.LOOKUP", server_inbox, {}},
      {"more than one token", "$SYS.REQ.ACCOUNT.a." + key + ".CLAIMS.LOOKUP", server_inbox, {}},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(ServerAccountLookup(r.subject, r.reply), r.want) << r.name;
  }
}

}  // namespace
}  // namespace switchboard::operator_logic
