// The authorizer's cache (a record per installation, the callout Secrets
// decoded) keeps every field its decisions read: the served server built
// from objects as the API server shows them and from the cache fed with
// them as the watchers deliver them (a masked parse, item by item, relists)
// is the same, for every case the selection and the directory distinguish.
#include "switchboard/authorizer/installations.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <sstream>

#include "switchboard/api/names.h"
#include "switchboard/authorizer/served.h"
#include "switchboard/common/base64.h"
#include "switchboard/kube/field_mask.h"
#include "switchboard/natsauth/nkey.h"
#include "switchboard/operator_logic/callout.h"
#include "switchboard/operator_logic/cluster_render.h"
#include "switchboard/operator_logic/credentials.h"
#include "switchboard/operator_logic/env.h"
#include "switchboard/operator_logic/objects.h"
#include "switchboard/operator_logic/secrets.h"
#include "switchboard/testing/test_ca.h"

namespace switchboard::authorizer {
namespace {

namespace logic = operator_logic;
using nlohmann::json;
using ::testing::HasSubstr;

// What the API server adds to every object the operator writes or a user
// applies: bookkeeping no decision reads.
void AsServed(json& o, const std::string& uid, const std::string& created) {
  auto& m = o["metadata"];
  m["uid"] = uid;
  m["resourceVersion"] = "4711";
  m["creationTimestamp"] = created;
  m["generation"] = 3;
  m["managedFields"] = json::array({{{"manager", "kubectl"}, {"operation", "Apply"}}});
  m["labels"]["app.kubernetes.io/part-of"] = "hatchet";
  m["annotations"]["example.com/note"] = "kept by the operator's cache, not by the authorizer's";
}

json Backend(const std::string& ns, const std::string& name, const std::string& created) {
  json b = {{"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
            {"kind", "PubSubBackend"},
            {"metadata", {{"namespace", ns}, {"name", name}}},
            {"spec",
             {{"kind", "nats"},
              {"nats",
               {{"serverRef", {{"name", "a"}, {"namespace", "nats"}}},
                {"subjectPrefix", "hatchet." + name},
                {"credentials", {{"username", "ignored-in-callout"}}}}},
              {"output", {{"secretName", name + "-pubsub-env"}}}}},
            {"status",
             {{"observedGeneration", 3},
              {"username", "nats-" + name},
              {"conditions", json::array({{{"type", "Ready"},
                                           {"status", "True"},
                                           {"reason", "Provisioned"},
                                           {"message", "credentials authenticate"},
                                           {"lastTransitionTime", created}}})}}}};
  AsServed(b, "uid-" + ns + "-" + name, created);
  b["metadata"]["finalizers"] = json::array({"pubsub.switchboard.dev/cleanup"});
  return b;
}

struct World {
  json server;
  std::vector<json> backends;
  std::map<std::string, json> secrets;  // "ns/name"

  void Put(json s) {
    AsServed(s, "uid-secret-" + s["metadata"]["name"].get<std::string>(), "2026-12-01T10:00:00Z");
    s["type"] = "Opaque";
    std::string key = s["metadata"]["namespace"].get<std::string>() + "/" +
                      s["metadata"]["name"].get<std::string>();
    secrets[key] = std::move(s);
  }
  json& SecretOf(const std::string& ns, const std::string& backend) {
    return secrets.at(ns + "/" + api::DefaultCredentialsSecretName(backend));
  }
  json& BackendNamed(const std::string& name) {
    for (auto& b : backends) {
      if (b["metadata"]["name"] == name) return b;
    }
    throw std::out_of_range(name);
  }
};

logic::CredentialState State(const std::string& user, int rotation) {
  logic::CredentialState s;
  s.current = {user, "pw-" + user, "$2b$04$" + std::string(53, 'c')};
  s.rotation_count = rotation;
  return s;
}

void AddInstallation(World& w, const std::string& ns, const std::string& name,
                     const std::string& created, logic::CredentialState state) {
  json b = Backend(ns, name, created);
  const std::string uid = b["metadata"]["uid"];
  w.backends.push_back(std::move(b));
  w.Put(logic::CredentialsSecret({ns, name, uid}, state));
  w.Put(logic::EnvSecret({ns, name, uid}, name + "-pubsub-env",
                         logic::NatsEnv("nats://a:4222", state.current.username,
                                        state.current.password, "hatchet." + name)));
}

World Base() {
  World w;
  w.server = {
      {"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
      {"kind", "NatsServer"},
      {"metadata", {{"namespace", "nats"}, {"name", "a"}}},
      {"spec",
       {{"url", "nats://a:4222,nats://b:4222"},
        {"provisioning", {{"mode", "AuthCallout"}, {"authCallout", {{"account", "APPS"}}}}}}},
      {"status",
       {{"authCallout", {{"issuer", "A..."}, {"authorizers", 2}, {"servers", 2}}},
        {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
  AsServed(w.server, "uid-server", "2026-12-01T09:00:00Z");
  static const natsauth::KeyPair issuer =
      std::move(natsauth::KeyPair::Generate(natsauth::KeyType::kAccount)).value();
  logic::CalloutKeys keys;
  keys.issuer_seed = issuer.Seed();
  keys.issuer = issuer.public_key();
  keys.authorizer = {"switchboard-authorizer", "pa", "$2b$04$" + std::string(53, 'a')};
  keys.system = {"switchboard-system", "ps", "$2b$04$" + std::string(53, 's')};
  w.Put(logic::CalloutSecret({"nats", "a", "uid-server"}, "a-auth-callout",
                             logic::EncodeCalloutKeys(keys)));
  w.Put(logic::ConfigSecret({"nats", "a", "uid-server"}, "a-switchboard", "switchboard.conf",
                            {.text = "authorization {}\n"}));
  AddInstallation(w, "nats", "b1", "2026-12-01T10:00:01Z", State("nats-b1", 0));
  AddInstallation(w, "nats", "b2", "2026-12-01T10:00:02Z", State("nats-b2", 2));
  return w;
}

std::string Describe(const Result<ServedServer>& r) {
  std::ostringstream out;
  if (!r.ok()) {
    out << "error " << r.status().ToString();
    return out.str();
  }
  out << r->key() << " urls=" << r->urls << " account=" << r->account
      << " issuer=" << r->issuer->public_key() << " authorizer=" << r->authorizer.password << "/"
      << r->authorizer.bcrypt << " system=" << r->system.password << "/" << r->system.bcrypt
      << " ca=" << r->ca.size() << "\n";
  const logic::Directory& d = *r->directory;
  out << "directory " << d.server_ns << "/" << d.server_name << " " << d.account << "\n";
  for (const auto& [user, e] : d.by_user) {
    out << user << ": " << e.ns() << "/" << e.name() << " " << e.username() << " "
        << e.subject_prefix();
    for (const auto& p : e.passwords()) {
      out << " [" << p.password << " " << p.bcrypt << " g" << p.generation << " until "
          << (p.until ? p.until->time_since_epoch().count() : -1) << "]";
    }
    out << "\n";
  }
  for (const auto& s : d.skipped) out << "skipped " << s << "\n";
  return out.str();
}

std::string Build(const World& w) {
  std::vector<const json*> backends;
  for (const auto& b : w.backends) backends.push_back(&b);
  auto lookup = [&](std::string_view ns, std::string_view name) -> const json* {
    auto it = w.secrets.find(std::string(ns) + "/" + std::string(name));
    return it == w.secrets.end() ? nullptr : &it->second;
  };
  return Describe(BuildServedServer(w.server, backends, lookup));
}

// What a watcher with parse_keep hands on: the text as the API server
// sends it, only the masked members parsed.
json Masked(const json& obj, const kube::FieldMask& mask) {
  return kube::ParseMasked(obj.dump(), mask);
}

kube::WatcherEvent Applied(json obj) {
  kube::WatcherEvent ev;
  ev.type = kube::WatcherEvent::Type::kApplied;
  ev.object = std::move(obj);
  return ev;
}

// The cache fed as the authorizer's watchers feed it (stream_list: every
// listed object applied, then the list's end with the listed keys).
void Feed(InstallationCache& cache, const World& w) {
  kube::WatcherEvent end;
  end.type = kube::WatcherEvent::Type::kRestarted;
  for (const auto& b : w.backends) {
    cache.OnBackendEvent(Applied(Masked(b, BackendFields())), "");
    end.listed.push_back(kube::ObjectKeyOf(b));
  }
  cache.OnBackendEvent(end, "");
  end.listed.clear();
  for (const auto& [key, s] : w.secrets) {
    cache.OnSecretEvent(Applied(Masked(s, SecretFields())), "");
    end.listed.push_back(key);
  }
  cache.OnSecretEvent(end, "");
}

std::string BuildFromCache(const InstallationCache& cache, const World& w) {
  return Describe(BuildServedServer(
      Masked(w.server, ServerFields()), cache.Records(),
      [&](std::string_view ns, std::string_view name) { return cache.Callout(ns, name); }));
}

std::string BuildFromCache(const World& w) {
  InstallationCache cache;
  Feed(cache, w);
  return BuildFromCache(cache, w);
}

logic::Time At(int s) { return logic::Time(std::chrono::seconds(1'800'000'000 + s)); }

TEST(InstallationCacheTest, TheServedServerIsTheSameFromTheCache) {
  struct Case {
    const char* what;
    std::function<void(World&)> change;
    std::string expect;  // a substring of the description: the case is what it says
  };
  std::vector<Case> cases = {
      {"two installations", [](World&) {}, "nats-b2: nats/b2 nats-b2 hatchet.b2 [pw-nats-b2"},
      {"a rotation staged (both passwords, no until)",
       [](World& w) {
         auto s = State("nats-b1", 1);
         s.previous = logic::Credentials{"nats-b1", "old-pw", "$2b$04$" + std::string(53, 'o')};
         s.phase = logic::RotationPhase::kStaged;
         s.rotation_token = "t1";
         w.SecretOf("nats", "b1") = logic::CredentialsSecret({"nats", "b1", "uid-nats-b1"}, s);
       },
       "[old-pw"},
      {"a rotation retiring (the old password's until)",
       [](World& w) {
         auto s = State("nats-b1", 1);
         s.previous = logic::Credentials{"nats-b1", "old-pw", "$2b$04$" + std::string(53, 'o')};
         s.phase = logic::RotationPhase::kRetiring;
         s.retires_at = At(600);
         w.SecretOf("nats", "b1") = logic::CredentialsSecret({"nats", "b1", "uid-nats-b1"}, s);
       },
       "until 1800000600"},
      {"a backend being deleted",
       [](World& w) {
         w.BackendNamed("b1")["metadata"]["deletionTimestamp"] = "2026-12-01T11:00:00Z";
       },
       "nats/b1: being deleted"},
      {"a namespace the server does not admit",
       [](World& w) {
         AddInstallation(w, "team", "b3", "2026-12-01T10:00:03Z", State("team-b3", 0));
       },
       "team/b3: namespace not admitted"},
      {"a namespace admitted by allowedNamespaces",
       [](World& w) {
         AddInstallation(w, "team", "b3", "2026-12-01T10:00:03Z", State("team-b3", 0));
         w.server["spec"]["allowedNamespaces"] = {{"from", "List"}, {"names", {"team"}}};
       },
       "team-b3: team/b3"},
      {"a credentials Secret owned by another object",
       [](World& w) {
         w.SecretOf("nats", "b1")["metadata"]["ownerReferences"][0]["uid"] = "other";
       },
       "is not owned by it"},
      {"a credentials Secret without the managed-by label",
       [](World& w) {
         w.SecretOf("nats", "b1")["metadata"]["labels"].erase("app.kubernetes.io/managed-by");
       },
       "is not owned by it"},
      {"a SecretConflict",
       [](World& w) {
         w.SecretOf(
             "nats",
             "b1")["metadata"]["annotations"][std::string(logic::kSecretConflictAnnotation)] =
             "yes";
       },
       "nats/b1: SecretConflict"},
      {"a credentials Secret with a value that is not base64 (another key)",
       [](World& w) { w.SecretOf("nats", "b1")["data"]["note"] = "not base64!"; },
       "data.note: not base64"},
      {"a credentials Secret without its bcrypt",
       [](World& w) { w.SecretOf("nats", "b1")["data"].erase("bcrypt"); }, "bcrypt"},
      {"no credentials Secret yet",
       [](World& w) { w.secrets.erase("nats/" + api::DefaultCredentialsSecretName("b2")); },
       "nats/b2: no credentials Secret yet"},
      {"two backends with one prefix: the older keeps it",
       [](World& w) {
         AddInstallation(w, "nats", "b0", "2026-12-01T09:59:00Z", State("nats-b0", 0));
         w.BackendNamed("b0")["spec"]["nats"]["subjectPrefix"] = "hatchet.b1";
       },
       "nats-b0: nats/b0 nats-b0 hatchet.b1"},
      {"a backend on another server, one of another kind, one with the default prefix",
       [](World& w) {
         AddInstallation(w, "nats", "b4", "2026-12-01T10:00:04Z", State("nats-b4", 0));
         w.BackendNamed("b4")["spec"]["nats"]["serverRef"]["name"] = "z";
         AddInstallation(w, "nats", "b5", "2026-12-01T10:00:05Z", State("nats-b5", 0));
         w.BackendNamed("b5")["spec"]["kind"] = "rabbitmq";
         AddInstallation(w, "nats", "b6", "2026-12-01T10:00:06Z", State("nats-b6", 0));
         w.BackendNamed("b6")["spec"]["nats"].erase("subjectPrefix");
         w.BackendNamed("b6")["spec"]["nats"]["serverRef"].erase("namespace");
       },
       "nats-b6: nats/b6 nats-b6 hatchet.pubsub"},
      {"the callout Secret with a CA",
       [](World& w) {
         w.secrets.at("nats/a-auth-callout")["data"]["ca.crt"] =
             base64::Encode(::switchboard::testing::kTestCaPem);
       },
       "ca=" + std::to_string(std::string_view(::switchboard::testing::kTestCaPem).size())},
      {"a named callout Secret that is not there",
       [](World& w) {
         w.server["spec"]["provisioning"]["authCallout"]["secretName"] = "elsewhere";
       },
       "nats/elsewhere not found"},
      {"a callout Secret with a broken seed",
       [](World& w) {
         w.secrets.at("nats/a-auth-callout")["data"]["issuer-seed"] = base64::Encode("SNOTASEED");
       },
       "\"issuer-seed\" is not an account seed"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    World full = Base();
    c.change(full);
    const std::string from_full = Build(full);
    EXPECT_THAT(from_full, HasSubstr(c.expect));
    EXPECT_EQ(BuildFromCache(full), from_full);
    // Changes reach the cache as events too: from the base world, the
    // case's objects applied and the relist's end drop what it removed.
    InstallationCache cache;
    Feed(cache, Base());
    Feed(cache, full);
    EXPECT_EQ(BuildFromCache(cache, full), from_full);
  }
}

// Which events change what is served (a rebuild is woken only then).
TEST(InstallationCacheTest, OnlyWhatADecisionReadsIsAChange) {
  World w = Base();
  InstallationCache cache;
  Feed(cache, w);
  EXPECT_EQ(cache.backends(), 2u);
  EXPECT_EQ(cache.secrets(), 4u) << "two credentials and the callout and config Secrets";

  json status_write = w.backends[0];
  status_write["metadata"]["resourceVersion"] = "4712";
  status_write["status"]["conditions"] = json::array();
  EXPECT_FALSE(cache.OnBackendEvent(Applied(Masked(status_write, BackendFields())), ""));

  json env = w.secrets.at("nats/b1-pubsub-env");
  env["data"]["NATS_URL"] = base64::Encode("nats://elsewhere:4222");
  EXPECT_FALSE(cache.OnSecretEvent(Applied(Masked(env, SecretFields())), ""))
      << "an env Secret is not kept";

  json prefix = w.backends[0];
  prefix["spec"]["nats"]["subjectPrefix"] = "hatchet.other";
  EXPECT_TRUE(cache.OnBackendEvent(Applied(Masked(prefix, BackendFields())), ""));

  auto s = State("nats-b2", 3);
  json rotated = logic::CredentialsSecret({"nats", "b2", "uid-nats-b2"}, s);
  EXPECT_TRUE(cache.OnSecretEvent(Applied(rotated), ""));
  EXPECT_FALSE(cache.OnSecretEvent(Applied(rotated), "")) << "the same data again";

  // A credentials Secret before its backend: kept, nothing served changes
  // until the backend comes, whose record reads it.
  World later = w;
  AddInstallation(later, "nats", "b9", "2026-12-01T10:00:09Z", State("nats-b9", 0));
  EXPECT_FALSE(cache.OnSecretEvent(
      Applied(later.secrets.at("nats/" + api::DefaultCredentialsSecretName("b9"))), ""));
  EXPECT_TRUE(cache.OnBackendEvent(Applied(later.BackendNamed("b9")), ""));
  auto records = cache.Records();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[2]->key(), "nats/b9");
  ASSERT_NE(records[2]->credentials, nullptr);
  EXPECT_EQ(records[2]->credentials->current.username, "nats-b9");

  kube::WatcherEvent deleted;
  deleted.type = kube::WatcherEvent::Type::kDeleted;
  deleted.object = later.SecretOf("nats", "b9");
  EXPECT_TRUE(cache.OnSecretEvent(deleted, ""));
  EXPECT_EQ(cache.Records()[2]->skipped, "no credentials Secret yet");
}

// A relist of one namespace's watcher drops what it no longer lists in
// that namespace only.
TEST(InstallationCacheTest, ARelistDropsWhatItDoesNotListInItsScope) {
  World w = Base();
  AddInstallation(w, "team", "b3", "2026-12-01T10:00:03Z", State("team-b3", 0));
  InstallationCache cache;
  Feed(cache, w);
  ASSERT_EQ(cache.backends(), 3u);
  kube::WatcherEvent end;
  end.type = kube::WatcherEvent::Type::kRestarted;
  end.listed = {"nats/b1"};
  EXPECT_TRUE(cache.OnBackendEvent(end, "nats"));
  std::vector<std::string> keys;
  for (const auto& r : cache.Records()) keys.push_back(r->key());
  EXPECT_EQ(keys, (std::vector<std::string>{"nats/b1", "team/b3"}));
  end.listed = {"team/" + api::DefaultCredentialsSecretName("b3")};
  EXPECT_TRUE(cache.OnSecretEvent(end, "nats")) << "the callout Secret went";
  EXPECT_EQ(cache.Callout("nats", "a-auth-callout"), nullptr);
  EXPECT_EQ(cache.Records()[0]->skipped, "no credentials Secret yet");
  EXPECT_NE(cache.Records()[1]->credentials, nullptr);
}

}  // namespace
}  // namespace switchboard::authorizer
