// AuthCallout + Accounts in NATS operator mode: the claims the operator
// signs (operator_mode_claims.h) and the static server config
// (operator_mode_config.h), as tables.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "switchboard/natsauth/jwt.h"
#include "switchboard/natsauth/nkey.h"
#include "switchboard/natsauth/operator_jwt.h"
#include "switchboard/operator_logic/operator_mode_claims.h"
#include "switchboard/operator_logic/operator_mode_config.h"

namespace switchboard::operator_logic {
namespace {

using natsauth::KeyPair;
using natsauth::KeyType;
using ::testing::HasSubstr;

constexpr int64_t kNow = 1'780'000'000;
constexpr int64_t k16Mi = 16 * 1024 * 1024;

KeyPair Key(KeyType type) { return KeyPair::Generate(type).value(); }

// Every key of one server, and the tokens the config needs.
struct World {
  KeyPair op = Key(KeyType::kOperator), sys = Key(KeyType::kAccount), auth = Key(KeyType::kAccount),
          signing = Key(KeyType::kAccount), authorizer = Key(KeyType::kUser),
          sentinel = Key(KeyType::kUser);
  OperatorModeKeys keys{.operator_key = op.public_key(),
                        .system_account = sys.public_key(),
                        .auth_account = auth.public_key(),
                        .authorizer_user = authorizer.public_key(),
                        .installation_signing_key = signing.public_key()};

  OperatorModeConfigInput Input() const {
    OperatorModeConfigInput in;
    in.server_ns = "nats";
    in.server_name = "main";
    in.operator_jwt = natsauth::EncodeOperatorClaims(OperatorClaimsFor(keys, kNow), op).value();
    in.system_account_jwt =
        natsauth::EncodeAccountClaims(SystemAccountClaims(keys, kNow), op).value();
    in.auth_account_jwt = natsauth::EncodeAccountClaims(AuthAccountClaims(keys, kNow), op).value();
    in.sentinel_jwt =
        natsauth::EncodeUserClaims(SentinelClaims(sentinel.public_key(), kNow), auth).value();
    in.resolver_dir = "/data/resolver";
    in.now = kNow;
    return in;
  }
};

TEST(OperatorModeClaimsTest, FixedAccountsAndSentinel) {
  World w;
  auto op = OperatorClaimsFor(w.keys, kNow);
  EXPECT_EQ(op.claims.subject, w.keys.operator_key);
  EXPECT_EQ(op.system_account, w.keys.system_account);

  auto sys = SystemAccountClaims(w.keys, kNow);
  EXPECT_EQ(sys.claims.subject, w.keys.system_account);
  EXPECT_EQ(sys.claims.name, "SYS");
  EXPECT_EQ(sys.limits, natsauth::AccountLimits{});
  EXPECT_TRUE(sys.authorization.auth_users.empty());

  auto auth = AuthAccountClaims(w.keys, kNow);
  EXPECT_EQ(auth.claims.name, "SWITCHBOARD_AUTH");
  EXPECT_EQ(auth.authorization.auth_users, std::vector<std::string>{w.keys.authorizer_user});
  EXPECT_EQ(auth.authorization.allowed_accounts, std::vector<std::string>{"*"});

  auto sentinel = SentinelClaims(w.sentinel.public_key(), kNow);
  EXPECT_TRUE(sentinel.bearer_token);
  EXPECT_EQ(sentinel.pub.deny, std::vector<std::string>{">"});
  EXPECT_EQ(sentinel.sub.deny, std::vector<std::string>{">"});
  EXPECT_TRUE(sentinel.pub.allow.empty());
}

TEST(OperatorModeClaimsTest, InstallationAccountFromItsLimits) {
  World w;
  std::string account = Key(KeyType::kAccount).public_key();
  struct Case {
    std::string name;
    api::InstallationLimits limits;
    natsauth::AccountLimits want;
  };
  std::vector<Case> cases = {
      {"no limits: unlimited", {}, {}},
      {"connections only", {.max_connections = 3}, {.conn = 3}},
      {"every limit",
       {.max_connections = 10, .max_subscriptions = 500, .max_payload = 32 * 1024 * 1024},
       {.subs = 500, .payload = 32 * 1024 * 1024, .conn = 10}},
      {"payload at the engine's floor", {.max_payload = k16Mi}, {.payload = k16Mi}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto a = InstallationAccountClaims({"team-a", "hatchet", account, c.limits}, w.keys, kNow);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    EXPECT_EQ(a->claims.subject, account);
    EXPECT_EQ(a->claims.name, "team-a/hatchet");
    EXPECT_EQ(a->claims.issued_at, kNow);
    EXPECT_EQ(a->limits, c.want);
    EXPECT_EQ(a->signing_keys, std::vector<std::string>{w.keys.installation_signing_key});
    EXPECT_TRUE(a->authorization.auth_users.empty());
    // The operator can sign what it built.
    EXPECT_TRUE(natsauth::EncodeAccountClaims(*a, w.op).ok());
  }
}

TEST(OperatorModeClaimsTest, InstallationAccountRefusals) {
  World w;
  std::string account = Key(KeyType::kAccount).public_key();
  struct Case {
    std::string name;
    InstallationAccountInput in;
    std::function<void(OperatorModeKeys&)> keys;
    std::string message;
  };
  std::vector<Case> cases = {
      {"account is a user key",
       {"team-a", "hatchet", w.authorizer.public_key(), {}},
       nullptr,
       "installation team-a/hatchet account: not an account public key"},
      {"account is the system account",
       {"team-a", "hatchet", w.keys.system_account, {}},
       nullptr,
       "one of the server's own keys"},
      {"account is the signing key",
       {"team-a", "hatchet", w.keys.installation_signing_key, {}},
       nullptr,
       "one of the server's own keys"},
      {"no signing key",
       {"team-a", "hatchet", account, {}},
       [](OperatorModeKeys& k) { k.installation_signing_key.clear(); },
       "installation signing key: not an account public key"},
      {"zero connections",
       {"team-a", "hatchet", account, {.max_connections = 0}},
       nullptr,
       "maxConnections: is 0, below 1; set 1 to"},
      {"negative subscriptions",
       {"team-a", "hatchet", account, {.max_subscriptions = -1}},
       nullptr,
       "maxSubscriptions: is -1, below 1"},
      {"more subscriptions than the API allows",
       {"team-a", "hatchet", account, {.max_subscriptions = 1'000'000'000}},
       nullptr,
       "maxSubscriptions: is 1000000000, above"},
      {"payload under the engine's 16 MiB",
       {"team-a", "hatchet", account, {.max_payload = k16Mi - 1}},
       nullptr,
       "team-a/hatchet: maxPayload:"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    OperatorModeKeys keys = w.keys;
    if (c.keys) c.keys(keys);
    auto a = InstallationAccountClaims(c.in, keys, kNow);
    ASSERT_FALSE(a.ok());
    EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(a.status().message(), HasSubstr(c.message));
  }
}

TEST(OperatorModeConfigTest, GoldenText) {
  World w;
  OperatorModeConfigInput in = w.Input();
  auto text = RenderOperatorModeConfig(in);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text,
            "# Generated by switchboard for NatsServer nats/main. Do not edit.\n"
            "# provisioning: AuthCallout, isolation: Accounts (NATS operator mode); installation "
            "accounts are pushed to the resolver\n"
            "max_payload: 16777216\n"
            "operator: \"" +
                in.operator_jwt +
                "\"\n"
                "system_account: \"" +
                w.keys.system_account +
                "\"\n"
                "resolver: {\n  type: full\n  dir: \"/data/resolver\"\n  allow_delete: true\n}\n"
                "resolver_preload: {\n"
                "  \"" +
                w.keys.system_account + "\": \"" + in.system_account_jwt +
                "\"\n"
                "  \"" +
                w.keys.auth_account + "\": \"" + in.auth_account_jwt +
                "\"\n"
                "}\n"
                "default_sentinel: \"" +
                in.sentinel_jwt +
                "\"\n"
                "authorization {\n  timeout: 5\n}\n");
  // Same input, same bytes.
  EXPECT_EQ(RenderOperatorModeConfig(in).value(), *text);
  // No seed of any key.
  for (const KeyPair* k : {&w.op, &w.sys, &w.auth, &w.signing, &w.authorizer, &w.sentinel}) {
    EXPECT_THAT(*text, ::testing::Not(HasSubstr(k->Seed())));
  }
}

TEST(OperatorModeConfigTest, Refusals) {
  World w;
  World other;
  struct Case {
    std::string name;
    std::function<void(OperatorModeConfigInput&)> change;
    std::string message;
  };
  auto sign_auth = [&](const natsauth::AccountClaims& a, const KeyPair& by) {
    return natsauth::EncodeAccountClaims(a, by).value();
  };
  std::vector<Case> cases = {
      {"bad namespace", [](auto& in) { in.server_ns = "Nats"; }, "metadata.namespace"},
      {"payload under 16 MiB", [](auto& in) { in.max_payload = k16Mi - 1; }, "spec.maxPayload"},
      {"operator is an account JWT", [&](auto& in) { in.operator_jwt = in.system_account_jwt; },
       "operator: operator JWT: nats.type is \"account\""},
      {"operator without system account",
       [&](auto& in) {
         auto op = OperatorClaimsFor(w.keys, kNow);
         op.system_account.clear();
         in.operator_jwt = natsauth::EncodeOperatorClaims(op, w.op).value();
       },
       "operator: the operator JWT names no system_account"},
      {"system account of another key",
       [&](auto& in) { in.system_account_jwt = other.Input().system_account_jwt; },
       "is not the operator JWT's system_account"},
      {"auth account is the system account",
       [&](auto& in) { in.auth_account_jwt = in.system_account_jwt; }, "is the system account"},
      {"auth account without callout",
       [&](auto& in) {
         auto a = AuthAccountClaims(w.keys, kNow);
         a.authorization = {};
         in.auth_account_jwt = sign_auth(a, w.op);
       },
       "has no authorization.auth_users"},
      {"auth account signed by another operator",
       [&](auto& in) {
         in.auth_account_jwt = sign_auth(AuthAccountClaims(w.keys, kNow), other.op);
       },
       "not signed by the operator"},
      {"sentinel not a bearer token",
       [&](auto& in) {
         auto s = SentinelClaims(w.sentinel.public_key(), kNow);
         s.bearer_token = false;
         in.sentinel_jwt = natsauth::EncodeUserClaims(s, w.auth).value();
       },
       "default_sentinel: is not a bearer token"},
      {"sentinel of another account",
       [&](auto& in) {
         in.sentinel_jwt =
             natsauth::EncodeUserClaims(SentinelClaims(w.sentinel.public_key(), kNow), w.sys)
                 .value();
       },
       "default_sentinel: is not a user of the auth account"},
      {"sentinel is garbage", [](auto& in) { in.sentinel_jwt = "x"; },
       "default_sentinel: user JWT"},
      {"relative resolver dir", [](auto& in) { in.resolver_dir = "data"; }, "resolver.dir"},
      {"resolver dir with a quote", [](auto& in) { in.resolver_dir = "/data\"x"; }, "resolver.dir"},
      {"resolver dir climbing", [](auto& in) { in.resolver_dir = "/data/../etc"; }, "resolver.dir"},
      {"empty resolver dir", [](auto& in) { in.resolver_dir.clear(); }, "resolver.dir"},
      {"timeout 0", [](auto& in) { in.timeout_seconds = 0; }, "outside 1..60"},
      {"expired operator",
       [&](auto& in) {
         auto op = OperatorClaimsFor(w.keys, kNow);
         op.claims.expires = kNow - 1;
         in.operator_jwt = natsauth::EncodeOperatorClaims(op, w.op).value();
       },
       "operator: operator JWT: expired"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    OperatorModeConfigInput in = w.Input();
    c.change(in);
    auto text = RenderOperatorModeConfig(in);
    ASSERT_FALSE(text.ok());
    EXPECT_THAT(text.status().message(), HasSubstr(c.message));
  }
}

}  // namespace
}  // namespace switchboard::operator_logic
