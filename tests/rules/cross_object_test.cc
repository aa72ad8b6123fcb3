// Rules that compare an object with the others that exist (Context), and
// UPDATE rules that compare it with its stored version.
#include <gtest/gtest.h>

#include <memory>

#include "switchboard/rules/refusal.h"
#include "switchboard/rules/validate.h"
#include "test_objects.h"

namespace switchboard::rules {
namespace {

using nlohmann::json;
using testing::Backend;
using testing::Server;

// A copy (callers often pass a temporary Report's list), or null.
std::unique_ptr<Finding> Find(const std::vector<Finding>& list, const std::string& rule) {
  for (const auto& f : list) {
    if (f.rule == rule) return std::make_unique<Finding>(f);
  }
  return nullptr;
}

// The object as the API server stores it: with a creationTimestamp. Of two
// backends that claim one prefix or user name the older keeps it; one
// without a timestamp (a manifest, a CREATE) is the newest.
json Stored(json object, const std::string& created = "2026-01-01T00:00:00Z") {
  object["metadata"]["creationTimestamp"] = created;
  return object;
}

Context WithServer(json server = Server()) {
  Context c;
  c.servers.push_back(std::move(server));
  return c;
}

TEST(CrossObject, SamePrefixOnOneServerIsRejectedNamingTheOther) {
  Context ctx = WithServer();
  ctx.backends.push_back(Stored(Backend("team-b", "other", "hatchet.shared")));
  Report r = Validate(Backend("team-a", "hatchet", "hatchet.shared"), ctx);
  auto f = Find(r.errors, "unique-prefix");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->field, "spec.nats.subjectPrefix");
  EXPECT_NE(f->message.find("PubSubBackend team-b/other"), std::string::npos) << f->message;
}

TEST(CrossObject, SamePrefixOnDifferentServersIsFine) {
  Context ctx = WithServer();
  ctx.servers.push_back(Server("nats", "other-server"));
  json other = Backend("team-b", "other", "hatchet.shared");
  other["spec"]["nats"]["serverRef"]["name"] = "other-server";
  ctx.backends.push_back(other);
  Report r = Validate(Backend("team-a", "hatchet", "hatchet.shared"), ctx);
  EXPECT_TRUE(r.ok()) << r.errors[0].ToString();
}

TEST(CrossObject, DefaultPrefixesCollide) {
  // Neither sets subjectPrefix: both get hatchet.pubsub on the same server.
  json a = Backend("team-a", "hatchet"), b = Backend("team-b", "hatchet");
  a["spec"]["nats"].erase("subjectPrefix");
  b["spec"]["nats"].erase("subjectPrefix");
  Context ctx = WithServer();
  ctx.backends.push_back(Stored(b));
  Report r = Validate(a, ctx);
  ASSERT_NE(Find(r.errors, "unique-prefix"), nullptr);
}

TEST(CrossObject, ServerRefNamespaceDefaultsToBackendNamespace) {
  json server = Server("team-a", "local");
  server["spec"]["allowedNamespaces"] = {{"from", "Same"}};
  json b = Backend("team-a", "hatchet");
  b["spec"]["nats"]["serverRef"] = {{"name", "local"}};
  Report r = Validate(b, WithServer(server));
  EXPECT_TRUE(r.ok() && r.warnings.empty())
      << (r.errors.empty() ? r.warnings[0].ToString() : r.errors[0].ToString());
}

TEST(CrossObject, TheObjectItselfInTheContextIsIgnored) {
  Context ctx = WithServer();
  ctx.backends.push_back(Backend());
  Report r = Validate(Backend(), ctx);
  EXPECT_TRUE(r.ok()) << r.errors[0].ToString();
}

TEST(CrossObject, SameUsernameIsRejected) {
  json a = Backend("team-a", "one", "p.one"), b = Backend("team-b", "two", "p.two");
  a["spec"]["nats"]["credentials"] = {{"username", "hatchet"}};
  b["spec"]["nats"]["credentials"] = {{"username", "hatchet"}};
  Context ctx = WithServer();
  ctx.backends.push_back(Stored(b));
  Report r = Validate(a, ctx);
  auto f = Find(r.errors, "unique-username");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->field, "spec.nats.credentials.username");
  EXPECT_NE(f->message.find("team-b/two"), std::string::npos);
}

TEST(CrossObject, DefaultUsernamesCannotCollideAcrossNamespacesButExplicitCanMatchDefault) {
  // team-a/x-y defaults to "team-a-x-y"; another backend chose that name explicitly.
  json a = Backend("team-a", "x-y", "p.one"), b = Backend("team-b", "two", "p.two");
  b["spec"]["nats"]["credentials"] = {{"username", "team-a-x-y"}};
  Context ctx = WithServer();
  ctx.backends.push_back(Stored(b));
  EXPECT_NE(Find(Validate(a, ctx).errors, "unique-username"), nullptr);
}

TEST(CrossObject, GenerateNameBackendsDoNotClashOnUsername) {
  json a = Backend("team-a", "", "p.one"), b = Backend("team-a", "", "p.two");
  a["metadata"] = {{"generateName", "hatchet-"}, {"namespace", "team-a"}};
  b["metadata"] = {{"generateName", "hatchet-"}, {"namespace", "team-a"}};
  Context ctx = WithServer();
  ctx.backends.push_back(b);
  Report r = Validate(a, ctx);
  EXPECT_TRUE(r.ok()) << r.errors[0].ToString();
}

TEST(CrossObject, RotatedUsernameInStatusIsTaken) {
  json other = Backend("team-b", "two", "p.two");
  other["status"] = {{"username", "team-b-two-r1"}};
  json a = Backend("team-a", "one", "p.one");
  a["spec"]["nats"]["credentials"] = {{"username", "team-b-two-r1"}};
  Context ctx = WithServer();
  ctx.backends.push_back(Stored(other));
  EXPECT_NE(Find(Validate(a, ctx).errors, "unique-username"), nullptr);
}

TEST(CrossObject, NestedPrefixesWarnBothWays) {
  Context ctx = WithServer();
  ctx.backends.push_back(Backend("team-b", "outer", "a.b"));
  Report inner = Validate(Backend("team-a", "inner", "a.b.c"), ctx);
  EXPECT_TRUE(inner.ok());
  auto f = Find(inner.warnings, "nested-prefix");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("team-b/outer"), std::string::npos);

  Context ctx2 = WithServer();
  ctx2.backends.push_back(Backend("team-b", "inner", "a.b.c"));
  EXPECT_NE(Find(Validate(Backend("team-a", "outer", "a.b"), ctx2).warnings, "nested-prefix"),
            nullptr);
  // A shared first token is not nesting.
  Context ctx3 = WithServer();
  ctx3.backends.push_back(Backend("team-b", "x", "a.bc"));
  EXPECT_EQ(Find(Validate(Backend("team-a", "y", "a.b"), ctx3).warnings, "nested-prefix"), nullptr);
}

TEST(CrossObject, MissingServerIsAWarningNotAnError) {
  Report r = Validate(Backend(), Context{});
  EXPECT_TRUE(r.ok());
  auto f = Find(r.warnings, "server-not-found");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->field, "spec.nats.serverRef");
  EXPECT_NE(f->message.find("nats/shared"), std::string::npos);
}

TEST(CrossObject, AllowedNamespaces) {
  json same = Server();
  same["spec"]["allowedNamespaces"] = {{"from", "Same"}};
  Report r = Validate(Backend("team-a"), WithServer(same));
  auto f = Find(r.errors, "namespace-not-allowed");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->field, "spec.nats.serverRef");
  EXPECT_NE(f->message.find("\"team-a\""), std::string::npos);

  json list = Server();
  list["spec"]["allowedNamespaces"] = {{"from", "List"}, {"names", {"team-a", "team-b"}}};
  EXPECT_TRUE(Validate(Backend("team-a"), WithServer(list)).ok());
  EXPECT_FALSE(Validate(Backend("team-c"), WithServer(list)).ok());

  json defaulted = Server();  // no allowedNamespaces: Same
  defaulted["spec"].erase("allowedNamespaces");
  EXPECT_FALSE(Validate(Backend("team-a"), WithServer(defaulted)).ok());
  EXPECT_TRUE(Validate(Backend("nats"), WithServer(defaulted)).ok());
}

TEST(CrossObject, ServerWarnsAboutBackendsItExcludes) {
  json server = Server();
  server["spec"]["allowedNamespaces"] = {{"from", "List"}, {"names", {"team-a"}}};
  Context ctx;
  ctx.backends.push_back(Backend("team-a", "ok", "p.ok"));
  ctx.backends.push_back(Backend("team-z", "out", "p.out"));
  Report r = Validate(server, ctx);
  EXPECT_TRUE(r.ok());
  auto f = Find(r.warnings, "namespace-not-allowed");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("team-z/out"), std::string::npos);
  EXPECT_EQ(f->message.find("team-a/ok"), std::string::npos);
}

TEST(CrossObject, EnvSecretClashInOneNamespace) {
  json a = Backend("team-a", "one", "p.one"), b = Backend("team-a", "two", "p.two");
  a["spec"]["output"] = {{"secretName", "env"}};
  b["spec"]["output"] = {{"secretName", "env"}};
  Context ctx = WithServer();
  ctx.backends.push_back(b);
  auto f = Find(Validate(a, ctx).errors, "secret-collision");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->field, "spec.output.secretName");
  // Different namespaces: different Secrets.
  b["metadata"]["namespace"] = "team-b";
  Context ctx2 = WithServer();
  ctx2.backends.push_back(b);
  EXPECT_EQ(Find(Validate(a, ctx2).errors, "secret-collision"), nullptr);
}

TEST(CrossObject, SharingAReadOnlyPasswordSecretIsFine) {
  json a = Backend("team-a", "one", "p.one"), b = Backend("team-a", "two", "p.two");
  a["spec"]["nats"]["credentials"] = {{"passwordSecretRef", {{"name", "pw"}, {"key", "a"}}}};
  b["spec"]["nats"]["credentials"] = {{"passwordSecretRef", {{"name", "pw"}, {"key", "b"}}}};
  Context ctx = WithServer();
  ctx.backends.push_back(b);
  EXPECT_TRUE(Validate(a, ctx).ok());
  // ... but writing the env Secret over someone's password Secret is not.
  json c = Backend("team-a", "three", "p.three");
  c["spec"]["output"] = {{"secretName", "pw"}};
  ctx.backends.push_back(a);
  EXPECT_NE(Find(Validate(c, ctx).errors, "secret-collision"), nullptr);
}

TEST(CrossObject, TwoServersWithOneConfigSecret) {
  json a = Server("nats", "a"), b = Server("nats", "b");
  a["spec"]["config"] = {{"secretName", "cfg"}};
  b["spec"]["config"] = {{"secretName", "cfg"}};
  Context ctx;
  ctx.servers.push_back(b);
  auto f = Find(Validate(a, ctx).errors, "secret-collision");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->field, "spec.config.secretName");
}

// A callout keys Secret holds the issuer seed: no other object may write it.
TEST(CrossObject, CalloutSecretIsAnotherServersConfigSecret) {
  json a = Server("nats", "a"), b = Server("nats", "b");
  a["spec"]["provisioning"] = {{"mode", "AuthCallout"},
                               {"authCallout", {{"secretName", "b-switchboard"}}}};
  Context ctx;
  ctx.servers.push_back(b);
  auto f = Find(Validate(a, ctx).errors, "secret-collision");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->field, "spec.provisioning.authCallout.secretName");
  EXPECT_NE(f->message.find("the callout keys Secret"), std::string::npos) << f->message;
  // The other way round: b is told too.
  Context ctx2;
  ctx2.servers.push_back(a);
  f = Find(Validate(b, ctx2).errors, "secret-collision");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->field, "spec.config.secretName");
  // In IncludeFile mode a has no callout Secret to collide with.
  a["spec"]["provisioning"] = {{"mode", "IncludeFile"}};
  EXPECT_EQ(Find(Validate(a, ctx).errors, "secret-collision"), nullptr);
}

TEST(CrossObject, CalloutSecretIsABackendsEnvSecret) {
  json server = Server("team-a", "shared");
  server["spec"]["provisioning"] = {{"mode", "AuthCallout"}};
  json b = Backend("team-a", "one", "p.one");
  b["spec"]["output"] = {{"secretName", "shared-auth-callout"}};
  Context ctx;
  ctx.backends.push_back(b);
  auto f = Find(Validate(server, ctx).errors, "secret-collision");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->field, "spec.provisioning.authCallout.secretName");
}

// spec.usage.systemUser: the operator writes <name>-switchboard-system, a
// name no other object may write (IncludeFile; an AuthCallout server's
// system user is in its callout Secret).
TEST(CrossObject, UsageSystemSecretIsABackendsEnvSecret) {
  json server = Server("team-a", "shared");
  server["spec"]["usage"] = {{"systemUser", true}};
  json b = Backend("team-a", "one", "p.one");
  b["spec"]["output"] = {{"secretName", "shared-switchboard-system"}};
  Context ctx;
  ctx.backends.push_back(b);
  auto f = Find(Validate(server, ctx).errors, "secret-collision");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->field, "spec.usage.systemUser");
  EXPECT_NE(f->message.find("the usage system user's Secret"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("team-a/shared-switchboard-system"), std::string::npos) << f->message;
  // The backend is told too.
  Context ctx2 = WithServer();
  ctx2.servers.push_back(server);
  f = Find(Validate(b, ctx2).errors, "secret-collision");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->field, "spec.output.secretName");
  // Off, or in AuthCallout mode, nothing writes that Secret.
  server["spec"]["usage"]["systemUser"] = false;
  EXPECT_EQ(Find(Validate(server, ctx).errors, "secret-collision"), nullptr);
  server["spec"]["usage"]["systemUser"] = true;
  server["spec"]["provisioning"] = {{"mode", "AuthCallout"}};
  EXPECT_EQ(Find(Validate(server, ctx).errors, "secret-collision"), nullptr);
}

TEST(CrossObject, UsageSystemSecretIsAnotherServersConfigSecret) {
  json a = Server("nats", "a"), b = Server("nats", "b");
  a["spec"]["usage"] = {{"systemUser", true}};
  b["spec"]["config"] = {{"secretName", "a-switchboard-system"}};
  Context ctx;
  ctx.servers.push_back(b);
  auto f = Find(Validate(a, ctx).errors, "secret-collision");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->field, "spec.usage.systemUser");
  EXPECT_NE(f->message.find("the config Secret of NatsServer nats/b"), std::string::npos)
      << f->message;
}

// What the operator reports as SecretConflict rather than InvalidSpec:
// a refusal made only of Secret names claimed twice.
TEST(CrossObject, OnlySecretCollisionsIsARefusalOfSecretNamesAlone) {
  const Finding collision{"spec.output.secretName", "x", std::string(kSecretCollisionRule)};
  const Finding prefix{"spec.nats.subjectPrefix", "x", "unique-prefix"};
  struct Case {
    std::vector<Finding> errors;
    bool want;
  };
  for (const Case& c : std::vector<Case>{{{}, false},
                                         {{collision}, true},
                                         {{collision, collision}, true},
                                         {{collision, prefix}, false},
                                         {{prefix}, false}}) {
    Report r;
    r.errors = c.errors;
    EXPECT_EQ(OnlySecretCollisions(r), c.want) << c.errors.size();
  }
  // What the rules say of a server whose usage system Secret a backend
  // names: a refusal of that kind alone.
  json server = Server("team-a", "shared");
  server["spec"]["usage"] = {{"systemUser", true}};
  json b = Backend("team-a", "one", "p.one");
  b["spec"]["output"] = {{"secretName", "shared-switchboard-system"}};
  Context ctx;
  ctx.backends.push_back(b);
  EXPECT_TRUE(OnlySecretCollisions(Validate(server, ctx)));
}

TEST(CrossObject, KnownSecretsAreChecked) {
  json b = Backend();
  b["spec"] = {{"kind", "rabbitmq"},
               {"rabbitmq", {{"urlSecretRef", {{"name", "rmq"}, {"key", "url"}}}}}};
  json secret = {{"apiVersion", "v1"},
                 {"kind", "Secret"},
                 {"metadata", {{"name", "rmq"}, {"namespace", "team-a"}}},
                 {"stringData", {{"url", "http://user:topsecret@rabbit/"}}}};
  Context ctx;
  ctx.secrets.push_back(secret);
  Report r = Validate(b, ctx);
  auto f = Find(r.errors, "rabbitmq-url");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->message.find("topsecret"), std::string::npos) << "secret value leaked";
  // base64 data with an amqps URL is fine.
  secret.erase("stringData");
  secret["data"] = {{"url", "YW1xcHM6Ly91OnBAcmFiYml0Lw=="}};  // amqps://u:p@rabbit/
  ctx.secrets = {secret};
  EXPECT_TRUE(Validate(b, ctx).ok()) << Validate(b, ctx).errors[0].ToString();
  // A missing key.
  secret["data"] = {{"other", "eA=="}};
  ctx.secrets = {secret};
  EXPECT_NE(Find(Validate(b, ctx).errors, "rabbitmq-url"), nullptr);
}

TEST(CrossObject, ValidateAllEqualsValidateWithTheOthersAsContext) {
  std::vector<json> objects = {Server(), Backend("team-a", "a", "x.y"),
                               Backend("team-b", "b", "x.y"), Backend("team-c", "c", "x.y.z"),
                               Backend("team-d", "d", "p.q")};
  objects[4]["spec"]["nats"]["serverRef"]["name"] = "missing";
  std::vector<Report> all = ValidateAll(objects);
  ASSERT_EQ(all.size(), objects.size());
  for (size_t i = 0; i < objects.size(); ++i) {
    Context ctx;
    for (size_t j = 0; j < objects.size(); ++j) {
      if (j == i) continue;
      (objects[j]["kind"] == "NatsServer" ? ctx.servers : ctx.backends).push_back(objects[j]);
    }
    Report one = Validate(objects[i], ctx);
    ASSERT_EQ(one.errors.size(), all[i].errors.size()) << i;
    ASSERT_EQ(one.warnings.size(), all[i].warnings.size()) << i;
    for (size_t k = 0; k < one.errors.size(); ++k)
      EXPECT_EQ(one.errors[k].ToString(), all[i].errors[k].ToString());
    for (size_t k = 0; k < one.warnings.size(); ++k)
      EXPECT_EQ(one.warnings[k].ToString(), all[i].warnings[k].ToString());
  }
  // a and b share x.y; neither is stored, so the smaller namespace/name keeps it.
  EXPECT_TRUE(all[1].ok());
  EXPECT_FALSE(all[2].ok());
  EXPECT_NE(Find(all[3].warnings, "nested-prefix"), nullptr);
  EXPECT_NE(Find(all[4].warnings, "server-not-found"), nullptr);
}

TEST(CrossObject, ContextIndexGivesTheSameAnswer) {
  Context ctx = WithServer();
  ctx.backends.push_back(Stored(Backend("team-b", "other", "dup")));
  ContextIndex index(ctx);
  json b = Backend("team-a", "x", "dup");
  Report a = Validate(b, ctx), c = Validate(b, index, Operation::kCreate, nullptr, "default");
  ASSERT_EQ(a.errors.size(), c.errors.size());
  EXPECT_FALSE(c.ok());
}

TEST(CrossObject, NamespaceLessObjectIsJudgedInTheDefaultNamespace) {
  json b = Backend("team-a", "x", "dup");
  b["metadata"].erase("namespace");
  Context ctx = WithServer();
  ctx.backends.push_back(Stored(Backend("team-b", "x", "dup")));
  Report r = Validate(b, ctx, Operation::kCreate, nullptr, "team-b");
  // Same key as the context object: it is that object, not a clash.
  EXPECT_EQ(Find(r.errors, "unique-prefix"), nullptr);
  Report r2 = Validate(b, ctx, Operation::kCreate, nullptr, "team-c");
  EXPECT_NE(Find(r2.errors, "unique-prefix"), nullptr);
}

// --- UPDATE

TEST(Update, PrefixChangeWarns) {
  json old = Backend(), now = Backend();
  now["spec"]["nats"]["subjectPrefix"] = "hatchet.new";
  Report r = Validate(now, WithServer(), Operation::kUpdate, &old);
  EXPECT_TRUE(r.ok());
  auto f = Find(r.warnings, "update-prefix");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->field, "spec.nats.subjectPrefix");
  EXPECT_NE(f->message.find("restart"), std::string::npos);
  // CREATE with an old object: no update rules.
  EXPECT_EQ(Find(Validate(now, WithServer(), Operation::kCreate, &old).warnings, "update-prefix"),
            nullptr);
}

TEST(Update, DefaultedPrefixEqualsExplicitDefault) {
  json old = Backend(), now = Backend();
  old["spec"]["nats"].erase("subjectPrefix");
  now["spec"]["nats"]["subjectPrefix"] = "hatchet.pubsub";
  Report r = Validate(now, WithServer(), Operation::kUpdate, &old);
  EXPECT_EQ(Find(r.warnings, "update-prefix"), nullptr);
}

TEST(Update, KindChangeWarns) {
  json old = Backend(), now = Backend();
  now["spec"] = {{"kind", "postgres"}, {"postgres", json::object()}};
  Report r = Validate(now, WithServer(), Operation::kUpdate, &old);
  EXPECT_TRUE(r.ok());
  EXPECT_NE(Find(r.warnings, "update-kind"), nullptr);
}

TEST(Update, ServerAndUsernameChangesWarn) {
  json old = Backend(), now = Backend();
  now["spec"]["nats"]["serverRef"]["name"] = "other";
  now["spec"]["nats"]["credentials"] = {{"username", "new-user"}};
  Context ctx = WithServer();
  ctx.servers.push_back(Server("nats", "other"));
  Report r = Validate(now, ctx, Operation::kUpdate, &old);
  EXPECT_NE(Find(r.warnings, "update-server"), nullptr);
  EXPECT_NE(Find(r.warnings, "update-username"), nullptr);
}

TEST(Update, ProvisioningModeChangeWarns) {
  json old = Server(), now = Server();
  now["spec"]["provisioning"] = {{"mode", "AuthCallout"}};
  Report r = Validate(now, Context{}, Operation::kUpdate, &old);
  EXPECT_TRUE(r.ok());
  auto f = Find(r.warnings, "update-provisioning");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->field, "spec.provisioning.mode");
  EXPECT_NE(f->message.find("rolling restart"), std::string::npos) << f->message;
  // Back again warns the same way.
  r = Validate(old, Context{}, Operation::kUpdate, &now);
  EXPECT_NE(Find(r.warnings, "update-provisioning"), nullptr);
  // The default and an explicit IncludeFile are the same.
  now["spec"]["provisioning"] = {{"mode", "IncludeFile"}};
  EXPECT_EQ(
      Find(Validate(now, Context{}, Operation::kUpdate, &old).warnings, "update-provisioning"),
      nullptr);
}

TEST(Update, CalloutAccountChangeWarns) {
  json old = Server(), now = Server();
  old["spec"]["provisioning"] = {{"mode", "AuthCallout"}};
  now["spec"]["provisioning"] = {{"mode", "AuthCallout"}, {"authCallout", {{"account", "OTHER"}}}};
  auto f = Find(Validate(now, Context{}, Operation::kUpdate, &old).warnings, "update-provisioning");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->field, "spec.provisioning.authCallout");
  // The default written out is no change.
  now["spec"]["provisioning"]["authCallout"] = {{"account", "HATCHET"},
                                                {"secretName", "shared-auth-callout"}};
  EXPECT_EQ(
      Find(Validate(now, Context{}, Operation::kUpdate, &old).warnings, "update-provisioning"),
      nullptr);
}

TEST(Update, ServerIsolationChangeWarns) {
  json old = Server(), now = Server();
  now["spec"]["isolation"] = "Accounts";
  Report r = Validate(now, Context{}, Operation::kUpdate, &old);
  auto f = Find(r.warnings, "update-isolation");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->message.find("restart"), std::string::npos) << f->message;
}

TEST(Update, CalloutServerIsolationChangeAsksForARollingRestart) {
  json old = Server(), now = Server();
  old["spec"]["provisioning"] = {{"mode", "AuthCallout"}};
  now["spec"]["provisioning"] = {{"mode", "AuthCallout"}};
  now["spec"]["isolation"] = "Accounts";
  auto f = Find(Validate(now, Context{}, Operation::kUpdate, &old).warnings, "update-isolation");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("restart the NATS servers one at a time"), std::string::npos)
      << f->message;
  EXPECT_NE(f->message.find("Switching isolation"), std::string::npos) << f->message;
  // And back.
  f = Find(Validate(old, Context{}, Operation::kUpdate, &now).warnings, "update-isolation");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("restart the NATS servers"), std::string::npos) << f->message;
}

}  // namespace
}  // namespace switchboard::rules
