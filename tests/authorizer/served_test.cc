#include "switchboard/authorizer/served.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "switchboard/authorizer/authorizer.h"
#include "switchboard/authorizer/options.h"
#include "switchboard/common/base64.h"
#include "switchboard/operator_logic/objects.h"
#include "switchboard/testing/served_server.h"
#include "switchboard/testing/test_ca.h"

namespace switchboard::authorizer {
namespace {

namespace logic = operator_logic;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kCaPem = ::switchboard::testing::kTestCaPem;

json Server(std::string ns, std::string name, std::string mode) {
  json s = {{"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
            {"kind", "NatsServer"},
            {"metadata", {{"namespace", ns}, {"name", name}, {"uid", "u-" + name}}},
            {"spec", {{"url", "nats://a:4222,nats://b:4222"}}}};
  if (!mode.empty()) s["spec"]["provisioning"] = {{"mode", mode}};
  return s;
}

logic::Directory Dir(std::vector<std::tuple<std::string, int, std::optional<logic::Time>>> users) {
  // A password with an `until` is a retiring rotation's previous user's.
  std::vector<logic::DirectoryEntry> entries;
  for (auto& [user, generation, until] : users) {
    logic::CredentialState state;
    state.current = {.username = user, .password = "pw", .bcrypt = ""};
    state.rotation_count = generation;
    if (until) {
      state.previous = state.current;
      state.current.username = user + "-next";
      state.phase = logic::RotationPhase::kRetiring;
      state.retires_at = until;
      state.rotation_count = generation + 1;
    }
    entries.push_back(switchboard::testing::DirectoryEntryOf("team", user, "hatchet." + user,
                                                             std::move(state), user));
  }
  return switchboard::testing::DirectoryOf(entries, "", "", "HATCHET");
}

logic::Time T(int s) { return logic::Time(std::chrono::seconds(1'800'000'000 + s)); }

TEST(ServedTest, SelectsAuthCalloutServersAndTheNamedOnes) {
  EXPECT_TRUE(Selected(Server("nats", "a", "AuthCallout"), {}));
  EXPECT_FALSE(Selected(Server("nats", "a", "IncludeFile"), {}));
  EXPECT_FALSE(Selected(Server("nats", "a", ""), {}));  // the default mode is the file
  EXPECT_TRUE(Selected(Server("nats", "a", "AuthCallout"), {"x/y", "nats/a"}));
  EXPECT_FALSE(Selected(Server("nats", "b", "AuthCallout"), {"nats/a"}));
  EXPECT_FALSE(Selected(Server("nats", "a", "IncludeFile"), {"nats/a"}));
}

TEST(ServedTest, NarrowsAccess) {
  struct Case {
    const char* what;
    logic::Directory before, after;
    bool narrows;
  };
  std::vector<Case> cases = {
      {"same", Dir({{"a", 0, {}}}), Dir({{"a", 0, {}}}), false},
      {"a user added", Dir({{"a", 0, {}}}), Dir({{"a", 0, {}}, {"b", 0, {}}}), false},
      {"a user removed", Dir({{"a", 0, {}}, {"b", 0, {}}}), Dir({{"a", 0, {}}}), true},
      {"a password generation replaced", Dir({{"a", 0, {}}}), Dir({{"a", 1, {}}}), true},
      {"a password starts retiring", Dir({{"a", 0, {}}}), Dir({{"a", 0, T(10)}}), true},
      {"retires earlier", Dir({{"a", 0, T(10)}}), Dir({{"a", 0, T(5)}}), true},
      {"retires later", Dir({{"a", 0, T(5)}}), Dir({{"a", 0, T(10)}}), false},
      {"no longer retiring", Dir({{"a", 0, T(5)}}), Dir({{"a", 0, {}}}), false},
  };
  logic::Directory other_account = Dir({{"a", 0, {}}});
  other_account.account = "OTHER";
  cases.push_back({"the account changed", Dir({{"a", 0, {}}}), other_account, true});
  for (const auto& c : cases) {
    EXPECT_EQ(NarrowsAccess(c.before, c.after), c.narrows) << c.what;
  }
}

TEST(ServedTest, NextRetirement) {
  EXPECT_FALSE(NextRetirement(Dir({{"a", 0, {}}}), T(0)).has_value());
  EXPECT_EQ(NextRetirement(Dir({{"a", 0, T(30)}, {"b", 1, T(20)}}), T(0)), T(20));
  EXPECT_EQ(NextRetirement(Dir({{"a", 0, T(30)}, {"b", 1, T(20)}}), T(25)), T(30));
  EXPECT_FALSE(NextRetirement(Dir({{"a", 0, T(30)}}), T(30)).has_value());
}

// The callout Secret's data as the operator writes it for `issuer`: the
// authorizer's password "pa", the system user's "ps", with their hashes
// (DecodeCalloutKeys may check them).
json CalloutSecretData(const natsauth::KeyPair& issuer) {
  logic::CalloutKeys keys;
  keys.issuer_seed = issuer.Seed();
  keys.issuer = issuer.public_key();
  keys.authorizer = {.username = "switchboard-authorizer", .password = "pa", .bcrypt = ""};
  keys.system = {.username = "switchboard-system", .password = "ps", .bcrypt = ""};
  keys.authorizer.bcrypt = *logic::BcryptHash("pa", 4);
  keys.system.bcrypt = *logic::BcryptHash("ps", 4);
  json data = json::object();
  for (const auto& [k, v] : logic::EncodeCalloutKeys(keys)) data[k] = base64::Encode(v);
  return data;
}

TEST(ServedTest, BuildNeedsAuthCalloutAndTheCalloutSecret) {
  auto none = [](std::string_view, std::string_view) -> const json* { return nullptr; };
  auto file = BuildServedServer(Server("nats", "a", "IncludeFile"), {}, none);
  EXPECT_EQ(file.status().code(), StatusCode::kFailedPrecondition);
  auto missing = BuildServedServer(Server("nats", "a", "AuthCallout"), {}, none);
  EXPECT_EQ(missing.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(missing.status().message(), HasSubstr("nats/a-auth-callout"));

  // A callout Secret whose seed is not one: the error says which Secret,
  // never the value.
  json broken = {{"metadata", {{"namespace", "nats"}, {"name", "a-auth-callout"}}},
                 {"data", {{"issuer-seed", base64::Encode("SNOTASEED")}}}};
  auto lookup = [&](std::string_view, std::string_view name) -> const json* {
    return name == "a-auth-callout" ? &broken : nullptr;
  };
  auto bad = BuildServedServer(Server("nats", "a", "AuthCallout"), {}, lookup);
  EXPECT_EQ(bad.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(bad.status().message(), Not(HasSubstr("SNOTASEED")));
}

TEST(ServedTest, BuildsFromTheOperatorsCalloutSecret) {
  auto issuer = natsauth::KeyPair::Generate(natsauth::KeyType::kAccount);
  ASSERT_TRUE(issuer.ok());
  json data = CalloutSecretData(*issuer);
  json secret = {{"metadata", {{"namespace", "nats"}, {"name", "a-auth-callout"}}}, {"data", data}};
  auto lookup = [&](std::string_view ns, std::string_view name) -> const json* {
    return ns == "nats" && name == "a-auth-callout" ? &secret : nullptr;
  };
  auto served = BuildServedServer(Server("nats", "a", "AuthCallout"), {}, lookup);
  ASSERT_TRUE(served.ok()) << served.status().ToString();
  EXPECT_EQ(served->key(), "nats/a");
  EXPECT_EQ(served->urls, "nats://a:4222,nats://b:4222");
  EXPECT_EQ(served->account, "HATCHET");
  EXPECT_EQ(served->issuer->public_key(), issuer->public_key());
  EXPECT_EQ(served->authorizer.password, "pa");
  EXPECT_EQ(served->system.password, "ps");
  ASSERT_NE(served->directory, nullptr);
  EXPECT_TRUE(served->directory->by_user.empty());

  ServedServer other = *served;
  EXPECT_TRUE(served->SameConnections(other));
  other.directory = std::make_shared<const logic::Directory>();
  EXPECT_TRUE(served->SameConnections(other));  // a new directory is an Update
  other.system.password = "new";
  EXPECT_FALSE(served->SameConnections(other));
  other = *served;
  other.urls = "nats://c:4222";
  EXPECT_FALSE(served->SameConnections(other));
  EXPECT_EQ(served->ca, "");  // no ca.crt: no CA
  other = *served;
  other.ca = "-----BEGIN CERTIFICATE-----...";
  EXPECT_FALSE(served->SameConnections(other));  // a rotated CA reconnects

  // The operator's copy of spec.tls.caSecretRef is what the connections trust.
  const std::string ca = kCaPem;
  data["ca.crt"] = base64::Encode(ca);
  secret["data"] = data;
  auto with_ca = BuildServedServer(Server("nats", "a", "AuthCallout"), {}, lookup);
  ASSERT_TRUE(with_ca.ok()) << with_ca.status().ToString();
  EXPECT_EQ(with_ca->ca, ca);
  EXPECT_FALSE(served->SameConnections(*with_ca));
  // One that is no CA is refused, named, never quoted.
  data["ca.crt"] = base64::Encode("not-a-ca-at-all");
  secret["data"] = data;
  auto bad = BuildServedServer(Server("nats", "a", "AuthCallout"), {}, lookup);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("ca.crt"));
  EXPECT_THAT(bad.status().message(), Not(HasSubstr("not-a-ca-at-all")));
}

// isolation: Accounts: the operator-mode keys are decoded with the callout
// Secret (CalloutSecretOf), once; every build of the server shares them.
TEST(ServedTest, OperatorModeKeysComeDecodedWithTheCalloutSecret) {
  auto issuer = natsauth::KeyPair::Generate(natsauth::KeyType::kAccount);
  ASSERT_TRUE(issuer.ok());
  json data = CalloutSecretData(*issuer);
  json secret = {{"metadata", {{"namespace", "nats"}, {"name", "a-auth-callout"}}}, {"data", data}};
  json accounts = Server("nats", "a", "AuthCallout");
  accounts["spec"]["isolation"] = "Accounts";

  // Without the operator-mode keys: a config-mode server is served, an
  // Accounts one waits for the operator, told which key is missing.
  auto plain = std::make_shared<const CalloutSecret>(CalloutSecretOf(secret));
  ASSERT_TRUE(plain->keys.has_value()) << plain->problem;
  EXPECT_EQ(plain->operator_mode, nullptr);
  EXPECT_FALSE(plain->operator_mode_problem.empty());
  auto plain_lookup = [&](std::string_view, std::string_view) { return plain; };
  auto config_mode = BuildServedServer(Server("nats", "a", "AuthCallout"), {}, plain_lookup);
  ASSERT_TRUE(config_mode.ok()) << config_mode.status().ToString();
  EXPECT_EQ(config_mode->operator_mode, nullptr);
  auto waiting = BuildServedServer(accounts, {}, plain_lookup);
  EXPECT_EQ(waiting.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(waiting.status().message(), HasSubstr("nats/a-auth-callout"));
  EXPECT_THAT(waiting.status().message(), HasSubstr(logic::operator_mode_keys::kOperatorSeed));

  auto plan = logic::PlanOperatorModeSeeds(std::nullopt, 1'800'000'000);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  for (const auto& [k, v] : logic::EncodeOperatorModeSeeds(plan->seeds)) {
    data[k] = base64::Encode(v);
  }
  secret["data"] = data;
  auto decoded = std::make_shared<const CalloutSecret>(CalloutSecretOf(secret));
  ASSERT_NE(decoded->operator_mode, nullptr) << decoded->operator_mode_problem;
  EXPECT_EQ(decoded->operator_mode_seeds, plan->seeds);
  EXPECT_FALSE(*decoded == *plain);
  // Decoded again, the same values: no change for the cache to act on.
  EXPECT_TRUE(CalloutSecretOf(secret) == *decoded);

  auto lookup = [&](std::string_view, std::string_view) { return decoded; };
  auto first = BuildServedServer(accounts, {}, lookup);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = BuildServedServer(accounts, {}, lookup);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  ASSERT_NE(first->operator_mode, nullptr);
  EXPECT_EQ(first->operator_mode, second->operator_mode);  // shared, not decoded again
  EXPECT_EQ(first->operator_mode->keys.auth_account.public_key(), issuer->public_key());
  EXPECT_TRUE(first->SameConnections(*second));
  // The same Secret for a config-mode server: its keys are ignored.
  auto ignored = BuildServedServer(Server("nats", "a", "AuthCallout"), {}, lookup);
  ASSERT_TRUE(ignored.ok()) << ignored.status().ToString();
  EXPECT_EQ(ignored->operator_mode, nullptr);
  EXPECT_FALSE(ignored->SameConnections(*first));  // it logs in with a user JWT

  // The logins, served isolation's first: a server not restarted since a
  // switch of isolation still takes the other one.
  EXPECT_EQ(first->operator_mode_keys, first->operator_mode);
  EXPECT_EQ(LoginsOf(*first),
            (std::vector<std::shared_ptr<const OperatorMode>>{first->operator_mode, nullptr}));
  // Permissions after Accounts: the Secret keeps the operator-mode keys.
  EXPECT_EQ(ignored->operator_mode_keys, decoded->operator_mode);
  EXPECT_EQ(LoginsOf(*ignored),
            (std::vector<std::shared_ptr<const OperatorMode>>{nullptr, decoded->operator_mode}));
  // Permissions never switched: the passwords only.
  EXPECT_EQ(config_mode->operator_mode_keys, nullptr);
  EXPECT_EQ(LoginsOf(*config_mode), (std::vector<std::shared_ptr<const OperatorMode>>{nullptr}));
  EXPECT_FALSE(config_mode->SameConnections(*ignored));  // one more login to try
}

TEST(ReadinessTest, SyncedAndSubscribedWhereReachable) {
  SessionHealth subscribed{.attempted = true, .connected = true, .subscribed = true};
  SessionHealth unreachable{.attempted = true, .connected = false, .error = "connect: refused"};
  SessionHealth refused{.attempted = true,
                        .connected = true,
                        .subscribed = false,
                        .error = "subscribe: Permissions Violation"};
  SessionHealth starting{};
  SessionHealth tls{.attempted = true,
                    .connected = false,
                    .error = "connect: SSL handshake error",
                    .tls_failed = true};
  EXPECT_EQ(ReadinessOf(false, {}), "caches not synced");
  EXPECT_EQ(ReadinessOf(true, {}), "");
  EXPECT_EQ(ReadinessOf(true, {{"a/x", subscribed}, {"b/y", unreachable}}), "");
  EXPECT_THAT(ReadinessOf(true, {{"a/x", subscribed}, {"b/y", refused}}),
              HasSubstr("b/y: connected, not subscribed (subscribe: Permissions Violation)"));
  EXPECT_THAT(ReadinessOf(true, {{"a/x", starting}}), HasSubstr("a/x: connecting"));
  // A CA that does not verify the server is every replica's: not ready.
  EXPECT_THAT(ReadinessOf(true, {{"a/x", subscribed}, {"b/y", tls}}),
              HasSubstr("b/y: TLS refused (connect: SSL handshake error); check the CA of "
                        "spec.tls.caSecretRef"));
}

TEST(OptionsTest, DefaultsAndFlags) {
  auto d = ParseOptions({});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->sweep_interval, std::chrono::seconds(30));
  EXPECT_EQ(d->health.port, 8081);
  EXPECT_EQ(d->metrics.port, 8080);
  EXPECT_TRUE(d->servers.empty());
  auto o = ParseOptions({"--servers", "nats/a, nats/b", "--namespaces=x,y", "--health-addr",
                         "127.0.0.1:9000", "--metrics-addr=0", "--sweep-interval=5s",
                         "--request-workers=2", "--log-level=debug", "--kick-after=0"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->servers, (std::vector<std::string>{"nats/a", "nats/b"}));
  EXPECT_EQ(o->namespaces, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(o->health.host, "127.0.0.1");
  EXPECT_EQ(o->health.port, 9000);
  EXPECT_EQ(o->metrics.port, -1);
  EXPECT_EQ(o->sweep_interval, std::chrono::seconds(5));
  EXPECT_EQ(o->request_workers, 2);
  EXPECT_EQ(o->kick_after, std::chrono::milliseconds(0));
  for (const auto& bad : std::vector<std::vector<std::string>>{{"--servers=noslash"},
                                                               {"--servers=a/b/c"},
                                                               {"--health-addr=nope"},
                                                               {"--request-workers=0"},
                                                               {"--log-level=loud"},
                                                               {"--sweep-interval=1ms"},
                                                               {"--x"}}) {
    EXPECT_FALSE(ParseOptions(bad).ok()) << bad[0];
  }
  EXPECT_THAT(Usage(), HasSubstr("--sweep-interval"));
  EXPECT_TRUE(ParseOptions({"--help"})->help);
}

}  // namespace
}  // namespace switchboard::authorizer
