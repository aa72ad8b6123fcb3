// CollectInstallations: which backends put users into a NatsServer's file,
// from cluster objects alone. Table of cases, then determinism.
#include "switchboard/operator_logic/cluster_render.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "switchboard/operator_logic/objects.h"
#include "switchboard/operator_logic/rotation.h"
#include "switchboard/operator_logic/secrets.h"
#include "switchboard/testing/objects.h"

namespace switchboard::operator_logic {
namespace {

using nlohmann::json;

std::string Hash(char c) { return "$2b$06$" + std::string(53, c); }

// nats/shared; `from` with names [a] (ignored unless List).
json Server(const std::string& from = "All") {
  return testing::ServerBuilder()
      .Uid("srv-uid")
      .Url("nats://n:4222")
      .Set("/spec/allowedNamespaces", {{"from", from}, {"names", {"a"}}});
}

json Backend(const std::string& ns, const std::string& name, const std::string& server = "shared") {
  return testing::BackendBuilder(ns, name)
      .Uid(ns + "-" + name + "-uid")
      .Server("nats", server)
      .Prefix("hatchet." + ns + "." + name);
}

json Creds(const std::string& ns, const std::string& name, char hash = 'a') {
  CredentialState s;
  s.current = {ns + "-" + name, "pw", Hash(hash)};
  return CredentialsSecret({ns, name, ns + "-" + name + "-uid"}, s);
}

struct World {
  std::vector<json> backends;
  std::map<std::string, json> secrets;  // "<ns>/<name>"
  void Add(json backend, std::optional<json> secret) {
    if (secret) {
      secrets[(*secret)["metadata"]["namespace"].get<std::string>() + "/" +
              (*secret)["metadata"]["name"].get<std::string>()] = *secret;
    }
    backends.push_back(std::move(backend));
  }
  Result<ClusterRenderInput> Collect(const json& server) const {
    std::vector<const json*> ptrs;
    for (const auto& b : backends) ptrs.push_back(&b);
    return CollectInstallations(server, ptrs, [&](std::string_view ns, std::string_view name) {
      auto it = secrets.find(std::string(ns) + "/" + std::string(name));
      return it == secrets.end() ? nullptr : &it->second;
    });
  }
};

std::vector<std::string> Names(const ClusterRenderInput& in) {
  std::vector<std::string> out;
  for (const auto& i : in.input.installations) {
    for (const auto& u : i.users) out.push_back(i.ns + "/" + i.name + ":" + u.username);
  }
  return out;
}

TEST(CollectInstallations, WhoContributesUsers) {
  struct Case {
    const char* name;
    std::function<void(World&)> setup;
    std::vector<std::string> users;
    std::string skipped;  // substring of the one skip reason, "" when none
  } cases[] = {
      {"bound, owned credentials: its user",
       [](World& w) { w.Add(Backend("a", "h"), Creds("a", "h")); },
       {"a/h:a-h"},
       ""},
      {"bound to another server: ignored, not skipped",
       [](World& w) { w.Add(Backend("a", "h", "other"), Creds("a", "h")); },
       {},
       ""},
      {"being deleted: left out (its finalizer waits for this)",
       [](World& w) {
         json b = Backend("a", "h");
         b["metadata"]["deletionTimestamp"] = "2026-11-30T10:00:00Z";
         w.Add(b, Creds("a", "h"));
       },
       {},
       "being deleted"},
      {"no credentials Secret yet",
       [](World& w) { w.Add(Backend("a", "h"), std::nullopt); },
       {},
       "no credentials Secret"},
      {"credentials Secret owned by another uid (a recreated backend)",
       [](World& w) {
         json s = Creds("a", "h");
         s["metadata"]["ownerReferences"][0]["uid"] = "someone-else";
         w.Add(Backend("a", "h"), s);
       },
       {},
       "not owned"},
      {"credentials Secret without the managed-by label",
       [](World& w) {
         json s = Creds("a", "h");
         s["metadata"]["labels"].erase(std::string(kManagedByLabel));
         w.Add(Backend("a", "h"), s);
       },
       {},
       "not owned"},
      {"SecretConflict: marked credentials contribute nothing",
       [](World& w) {
         json s = Creds("a", "h");
         s["metadata"]["annotations"][std::string(kSecretConflictAnnotation)] = "h-pubsub-env";
         w.Add(Backend("a", "h"), s);
       },
       {},
       "SecretConflict"},
      {"corrupt credentials: skipped with the key named",
       [](World& w) {
         json s = Creds("a", "h");
         s["data"].erase("bcrypt");
         w.Add(Backend("a", "h"), s);
       },
       {},
       "\"bcrypt\""},
      {"old layout, rotated: both users (an upgrade drops none)",
       [](World& w) {
         SecretSpec spec;
         spec.ns = "a";
         spec.name = "h-nats-credentials";
         spec.data = {{"username", "a-h-r1"},       {"password", "pw"},
                      {"bcrypt", Hash('b')},        {"rotation-count", "1"},
                      {"previous-username", "a-h"}, {"previous-bcrypt", Hash('a')}};
         spec.owner = OwnerRef{.kind = "PubSubBackend", .name = "h", .uid = "a-h-uid"};
         w.Add(Backend("a", "h"), BuildSecret(spec));
       },
       {"a/h:a-h-r1", "a/h:a-h"},
       ""},
  };
  for (const auto& c : cases) {
    World w;
    c.setup(w);
    auto r = w.Collect(Server());
    ASSERT_TRUE(r.ok()) << c.name << ": " << r.status().ToString();
    EXPECT_EQ(Names(*r), c.users) << c.name;
    if (c.skipped.empty()) {
      EXPECT_TRUE(r->skipped.empty()) << c.name << ": " << r->skipped.front();
    } else {
      ASSERT_EQ(r->skipped.size(), 1u) << c.name;
      EXPECT_NE(r->skipped[0].find(c.skipped), std::string::npos)
          << c.name << ": " << r->skipped[0];
    }
  }
}

TEST(CollectInstallations, NamespaceNotAdmittedContributesNothing) {
  World w;
  w.Add(Backend("a", "h"), Creds("a", "h"));
  w.Add(Backend("b", "h"), Creds("b", "h"));
  auto r = w.Collect(Server("List"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Names(*r), (std::vector<std::string>{"a/h:a-h"}));
  ASSERT_EQ(r->skipped.size(), 1u);
  EXPECT_NE(r->skipped[0].find("b/h"), std::string::npos);
}

// The render decides conflicts as the rules do, by creationTimestamp.
TEST(CollectInstallations, CarriesTheCreationTimeForConflicts) {
  World w;
  json older = Backend("b", "h"), newer = Backend("a", "h");
  older["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z";
  newer["metadata"]["creationTimestamp"] = "2026-01-01T00:00:01Z";
  newer["spec"]["nats"]["subjectPrefix"] = "hatchet.b.h";
  w.Add(newer, Creds("a", "h"));
  w.Add(older, Creds("b", "h"));
  auto r = w.Collect(Server("All"));
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->input.installations.size(), 2u);
  EXPECT_EQ(r->input.installations[0].created, std::optional<int64_t>(1767225601));
  EXPECT_EQ(r->input.installations[1].created, std::optional<int64_t>(1767225600));
  auto rendered = RenderNatsConfig(r->input);
  ASSERT_TRUE(rendered.ok());
  ASSERT_EQ(rendered->rejected.size(), 1u);
  EXPECT_EQ(rendered->rejected[0].ns, "a") << rendered->rejected[0].ToString();
}

TEST(CollectInstallations, ServerFieldsThatDoNotParseNameTheField) {
  World w;
  json s = Server();
  s["spec"]["maxPayload"] = "lots";
  auto r = w.Collect(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("spec.maxPayload"), std::string::npos);
  s = Server();
  s["spec"]["isolation"] = "Walls";
  r = w.Collect(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("spec.isolation"), std::string::npos);
}

// Any replica, any cache order: the same objects give the same bytes.
TEST(CollectInstallations, SameObjectsSameBytesWhateverTheOrder) {
  World w;
  for (int i = 0; i < 50; i++) {
    std::string n = "h" + std::to_string(i);
    w.Add(Backend("a", n), Creds("a", n, static_cast<char>('a' + i % 26)));
  }
  auto first = RenderNatsConfig(w.Collect(Server())->input);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->installations, 50);
  std::mt19937 rng(7);
  for (int round = 0; round < 5; round++) {
    std::shuffle(w.backends.begin(), w.backends.end(), rng);
    auto again = RenderNatsConfig(w.Collect(Server())->input);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->text, first->text);
  }
}

// At the size ceiling the newest backends are left out: the render needs
// each one's creation time, and every replica reads the same one.
TEST(CollectInstallations, CarriesEachBackendsCreationTime) {
  World w;
  json b = Backend("a", "h");
  b["metadata"]["creationTimestamp"] = "2026-11-30T10:00:00Z";
  w.Add(b, Creds("a", "h"));
  w.Add(Backend("a", "g"), Creds("a", "g"));
  auto in = w.Collect(Server());
  ASSERT_TRUE(in.ok());
  ASSERT_EQ(in->input.installations.size(), 2u);
  EXPECT_TRUE(in->input.installations[0].created.has_value());
  EXPECT_FALSE(in->input.installations[1].created.has_value()) << "none: not stored yet";
  EXPECT_EQ(in->input.max_bytes, kMaxSecretDataBytes) << "the real path has the ceiling";
}

TEST(UsersInConfig, ReadsBackWhatTheRenderWrote) {
  World w;
  w.Add(Backend("a", "h"), Creds("a", "h", 'x'));
  w.Add(Backend("b", "h"), Creds("b", "h", 'y'));
  auto rendered = RenderNatsConfig(w.Collect(Server())->input);
  ASSERT_TRUE(rendered.ok());
  auto users = UsersInConfig(rendered->text);
  ASSERT_EQ(users.size(), 2u);
  EXPECT_EQ(users[0].username, "a-h");
  EXPECT_EQ(users[0].bcrypt, Hash('x'));
  EXPECT_EQ(users[1].username, "b-h");
  EXPECT_EQ(users[1].bcrypt, Hash('y'));
  // The placeholder of an empty file is a user nobody has.
  auto empty = RenderNatsConfig(World().Collect(Server())->input);
  ASSERT_TRUE(empty.ok());
  for (const auto& u : UsersInConfig(empty->text)) EXPECT_NE(u.username, "a-h");
  EXPECT_TRUE(UsersInConfig("").empty());
  EXPECT_TRUE(UsersInConfig("{user: \"truncated").empty());
}

}  // namespace
}  // namespace switchboard::operator_logic

namespace switchboard::operator_logic {
namespace {

// Each installation carries its effective limits (EffectiveLimits): its own
// over the server's defaults.
TEST(CollectInstallations, CarriesEffectiveLimits) {
  json server = Server();
  server["spec"]["isolation"] = "Accounts";
  server["spec"]["installationLimits"] = {{"maxConnections", 20}, {"maxSubscriptions", 100}};
  World w;
  json lowered = Backend("a", "lowered");
  lowered["spec"]["nats"]["limits"] = {{"maxConnections", 2}, {"maxPayload", "16Mi"}};
  w.Add(lowered, Creds("a", "lowered"));
  w.Add(Backend("b", "plain"), Creds("b", "plain"));
  auto in = w.Collect(server);
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  ASSERT_EQ(in->input.installations.size(), 2u);
  std::map<std::string, InstallationLimits> by_name;
  for (const auto& i : in->input.installations) by_name[i.name] = i.limits;
  EXPECT_EQ(by_name["lowered"], (InstallationLimits{2, 100, 16777216}));
  EXPECT_EQ(by_name["plain"], (InstallationLimits{20, 100, std::nullopt}));
}

}  // namespace
}  // namespace switchboard::operator_logic
