// InstallationRecord: what a backend and its credentials Secret make of one
// installation (a table), that a Secret's change alone recomputes the same
// record as both objects read again, and that the selection over records
// is the selection over the objects.
#include "switchboard/operator_logic/installation_record.h"

#include <gtest/gtest.h>

#include <functional>

#include "switchboard/common/base64.h"
#include "switchboard/operator_logic/callout.h"
#include "switchboard/operator_logic/cluster_render.h"
#include "switchboard/operator_logic/objects.h"
#include "switchboard/operator_logic/secrets.h"

namespace switchboard::operator_logic {
namespace {

using nlohmann::json;

json Backend() {
  return {{"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
          {"kind", "PubSubBackend"},
          {"metadata",
           {{"namespace", "team"},
            {"name", "b"},
            {"uid", "b-uid"},
            {"creationTimestamp", "2026-12-01T10:00:00Z"}}},
          {"spec",
           {{"kind", "nats"},
            {"nats",
             {{"serverRef", {{"name", "shared"}, {"namespace", "nats"}}},
              {"subjectPrefix", "hatchet.b"},
              {"limits", {{"maxConnections", 7}}}}}}},
          {"status", {{"conditions", json::array()}}}};
}

CredentialState State() {
  CredentialState s;
  s.current = {"team-b", "pw", "$2b$06$" + std::string(53, 'a')};
  return s;
}

json Secret() { return CredentialsSecret({"team", "b", "b-uid"}, State()); }

TEST(InstallationRecord, Table) {
  struct Case {
    const char* what;
    std::function<void(json& backend, std::optional<json>& secret)> change;
    std::function<void(InstallationRecord& expect)> expect;
  };
  const std::vector<Case> cases = {
      {"a backend and its Secret", [](json&, std::optional<json>&) {}, [](InstallationRecord&) {}},
      {"no Secret yet", [](json&, std::optional<json>& s) { s.reset(); },
       [](InstallationRecord& e) {
         e.credentials = nullptr;
         e.skipped = "no credentials Secret yet";
       }},
      {"a Secret owned by another uid",
       [](json&, std::optional<json>& s) { (*s)["metadata"]["ownerReferences"][0]["uid"] = "x"; },
       [](InstallationRecord& e) {
         e.credentials = nullptr;
         e.skipped = "Secret b-nats-credentials is not owned by it";
       }},
      {"a Secret without the managed-by label",
       [](json&, std::optional<json>& s) { (*s)["metadata"]["labels"].erase(kManagedByLabel); },
       [](InstallationRecord& e) {
         e.credentials = nullptr;
         e.skipped = "Secret b-nats-credentials is not owned by it";
       }},
      {"a SecretConflict",
       [](json&, std::optional<json>& s) {
         (*s)["metadata"]["annotations"][std::string(kSecretConflictAnnotation)] = "env";
       },
       [](InstallationRecord& e) {
         e.credentials = nullptr;
         e.skipped = "SecretConflict";
       }},
      {"data that is not base64", [](json&, std::optional<json>& s) { (*s)["data"]["x"] = "!"; },
       [](InstallationRecord& e) {
         e.credentials = nullptr;
         e.skipped = "data.x: not base64: use the standard alphabet with padding";
       }},
      {"a state without its hash",
       [](json&, std::optional<json>& s) { (*s)["data"].erase("bcrypt"); },
       [](InstallationRecord& e) {
         e.credentials = nullptr;
         e.skipped =
             "credentials Secret key \"bcrypt\" is missing; delete the credentials Secret to "
             "generate new credentials (engines then need the new env Secret)";
       }},
      {"being deleted, default prefix, no namespace on serverRef",
       [](json& b, std::optional<json>&) {
         b["metadata"]["deletionTimestamp"] = "2026-12-01T11:00:00Z";
         b["spec"]["nats"].erase("subjectPrefix");
         b["spec"]["nats"]["serverRef"].erase("namespace");
       },
       [](InstallationRecord& e) {
         e.deleting = true;
         e.subject_prefix = "hatchet.pubsub";
         e.server = api::ObjectKey{"team", "shared"};
       }},
      {"another kind: bound to no server",
       [](json& b, std::optional<json>&) { b["spec"]["kind"] = "rabbitmq"; },
       [](InstallationRecord& e) {
         e.server.reset();
         e.subject_prefix.clear();
         e.limits = {};
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    json backend = Backend();
    std::optional<json> secret = Secret();
    c.change(backend, secret);
    InstallationRecord expect;
    expect.ns = "team";
    expect.name = "b";
    expect.uid = "b-uid";
    expect.created = 1796119200;
    expect.server = api::ObjectKey{"nats", "shared"};
    expect.subject_prefix = "hatchet.b";
    expect.limits.max_connections = 7;
    expect.credentials = std::make_shared<const CredentialState>(State());
    c.expect(expect);

    std::optional<CredentialsSecretFacts> facts;
    if (secret) facts = CredentialsSecretFactsOf(*secret);
    const InstallationRecord got = RecordOf(backend, facts ? &*facts : nullptr);
    EXPECT_EQ(got, expect) << got.skipped;
    EXPECT_EQ(got.key(), "team/b");

    // The Secret attached later (its change alone) gives the same record.
    InstallationRecord later = RecordOf(backend, nullptr);
    AttachCredentials(later, facts ? &*facts : nullptr);
    EXPECT_EQ(later, got);
  }
}

TEST(InstallationRecord, CredentialsSecretNames) {
  EXPECT_EQ(BackendOfCredentialsSecret("b-nats-credentials"), "b");
  EXPECT_EQ(BackendOfCredentialsSecret("b-pubsub-env"), std::nullopt);
  EXPECT_EQ(BackendOfCredentialsSecret("-nats-credentials"), std::nullopt);
}

// The selection over records is the selection over the objects (the object
// overloads compute records): same installations, same skipped lines.
TEST(InstallationRecord, TheSelectionOverRecordsIsTheOneOverObjects) {
  json server = {{"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
                 {"kind", "NatsServer"},
                 {"metadata", {{"namespace", "nats"}, {"name", "shared"}}},
                 {"spec",
                  {{"url", "nats://n:4222"},
                   {"isolation", "Accounts"},
                   {"installationLimits", {{"maxConnections", 5}}},
                   {"allowedNamespaces", {{"from", "List"}, {"names", {"team"}}}}}}};
  json deleting = Backend();
  deleting["metadata"]["name"] = "d";
  deleting["metadata"]["deletionTimestamp"] = "2026-12-01T11:00:00Z";
  json other_ns = Backend();
  other_ns["metadata"]["namespace"] = "elsewhere";
  json no_secret = Backend();
  no_secret["metadata"]["name"] = "n";
  std::vector<json> backends = {Backend(), deleting, other_ns, no_secret};
  const json secret = Secret();
  auto lookup = [&](std::string_view ns, std::string_view name) -> const json* {
    return ns == "team" && name == "b-nats-credentials" ? &secret : nullptr;
  };
  std::vector<const json*> ptrs;
  for (const auto& b : backends) ptrs.push_back(&b);
  auto from_objects = CollectInstallations(server, ptrs, lookup);
  ASSERT_TRUE(from_objects.ok());

  const CredentialsSecretFacts facts = CredentialsSecretFactsOf(secret);
  std::vector<InstallationRecord> records;
  for (const auto& b : backends) {
    const bool has = api::NameOf(b) == "b" && api::NamespaceOf(b) == "team";
    records.push_back(RecordOf(b, has ? &facts : nullptr));
  }
  std::vector<const InstallationRecord*> rptrs;
  for (const auto& r : records) rptrs.push_back(&r);
  auto from_records = CollectInstallations(server, rptrs);
  ASSERT_TRUE(from_records.ok());
  EXPECT_EQ(from_records->skipped, from_objects->skipped);
  EXPECT_EQ(from_records->skipped,
            (std::vector<std::string>{"team/d: being deleted",
                                      "elsewhere/b: namespace not admitted by "
                                      "spec.allowedNamespaces",
                                      "team/n: no credentials Secret yet"}));
  ASSERT_EQ(from_records->input.installations.size(), 1u);
  ASSERT_EQ(from_objects->input.installations.size(), 1u);
  const Installation& a = from_records->input.installations[0];
  const Installation& b = from_objects->input.installations[0];
  EXPECT_EQ(a.ns + "/" + a.name + " " + a.subject_prefix, "team/b hatchet.b");
  ASSERT_EQ(a.users.size(), 1u);
  ASSERT_EQ(b.users.size(), 1u);
  EXPECT_EQ(a.users[0].username + " " + a.users[0].bcrypt,
            b.users[0].username + " " + b.users[0].bcrypt);
  EXPECT_EQ(a.limits, b.limits);
  EXPECT_EQ(a.limits.max_connections, 5) << "the server's policy caps the backend's 7";
  EXPECT_EQ(a.created, b.created);
}

}  // namespace
}  // namespace switchboard::operator_logic
