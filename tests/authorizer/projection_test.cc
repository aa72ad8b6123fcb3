// The authorizer's cache projection keeps every field its decisions read:
// the served server built from objects as the API server shows them and
// from their projections is the same, for every case the selection and
// the directory distinguish.
#include "switchboard/authorizer/projection.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <sstream>

#include "switchboard/api/names.h"
#include "switchboard/api/packed.h"
#include "switchboard/authorizer/served.h"
#include "switchboard/common/base64.h"
#include "switchboard/kube/cache_shapes.h"
#include "switchboard/kube/packed_object.h"
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
    out << user << ": " << e.ns << "/" << e.name << " " << e.username << " " << e.subject_prefix;
    for (const auto& p : e.passwords) {
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

// As the authorizer's caches keep them: projected, then packed
// (kube::PackObject, WatcherOptions::pack), read through
// BuildServedServerFromCache, which unpacks one backend at a time.
std::string BuildFromPackedCache(const World& projected) {
  std::vector<kube::ObjectPtr> backends;
  for (const auto& b : projected.backends) {
    backends.push_back(std::make_shared<const json>(kube::PackObject(b)));
  }
  std::map<std::string, kube::ObjectPtr> secrets;
  for (const auto& [key, s] : projected.secrets) {
    secrets[key] = std::make_shared<const json>(kube::PackObject(s));
  }
  auto lookup = [&](std::string_view ns, std::string_view name) -> kube::ObjectPtr {
    auto it = secrets.find(std::string(ns) + "/" + std::string(name));
    return it == secrets.end() ? nullptr : it->second;
  };
  return Describe(BuildServedServerFromCache(projected.server, backends, lookup));
}

World Projected(World w) {
  ProjectServer(w.server);
  for (auto& b : w.backends) ProjectBackend(b);
  for (auto& [key, s] : w.secrets) ProjectSecret(s);
  return w;
}

// Parsed as a watcher with parse_keep parses it (the text as the API
// server sends it, only the masked members), then projected.
World MaskedThenProjected(World w) {
  auto masked = [](json& obj, const kube::FieldMask& mask) {
    obj = kube::ParseMasked(obj.dump(), mask);
  };
  masked(w.server, ServerFields());
  for (auto& b : w.backends) masked(b, BackendFields());
  for (auto& [key, s] : w.secrets) masked(s, SecretFields());
  return Projected(w);
}

logic::Time At(int s) { return logic::Time(std::chrono::seconds(1'800'000'000 + s)); }

TEST(ProjectionTest, TheServedServerIsTheSameFromProjectedObjects) {
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
    EXPECT_EQ(Build(Projected(full)), from_full);
    EXPECT_EQ(BuildFromPackedCache(Projected(full)), from_full);
    // The projection of a masked parse is the projection of the whole
    // object, object by object (not only what the served server shows).
    const World projected = Projected(full), masked = MaskedThenProjected(full);
    EXPECT_EQ(masked.server, projected.server);
    EXPECT_EQ(masked.backends, projected.backends);
    EXPECT_EQ(masked.secrets, projected.secrets);
    EXPECT_EQ(Build(masked), from_full);
    // The operator's cache shape, which the decisions were written for,
    // reads the same too.
    World compact = full;
    kube::CompactCustomObject(compact.server);
    for (auto& b : compact.backends) kube::CompactCustomObject(b);
    for (auto& [key, s] : compact.secrets) kube::CompactOwnedSecret(s);
    EXPECT_EQ(Build(compact), from_full);
  }
}

TEST(ProjectionTest, KeepsOnlyWhatIsRead) {
  World w = Base();
  json backend = w.backends[0];
  ProjectBackend(backend);
  EXPECT_EQ(backend, json::parse(R"({
    "metadata": {"name": "b1", "namespace": "nats", "uid": "uid-nats-b1",
                 "resourceVersion": "4711", "creationTimestamp": "2026-12-01T10:00:01Z"},
    "spec": {"kind": "nats",
             "nats": {"serverRef": {"name": "a", "namespace": "nats"},
                      "subjectPrefix": "hatchet.b1"}}})"));

  json server = w.server;
  ProjectServer(server);
  EXPECT_FALSE(server.contains("status"));
  EXPECT_EQ(server["spec"], w.server["spec"]);

  json env = w.secrets.at("nats/b1-pubsub-env");
  ProjectSecret(env);
  EXPECT_EQ(env, json::parse(R"({"metadata": {
    "name": "b1-pubsub-env", "namespace": "nats", "resourceVersion": "4711"}})"));

  json credentials = w.SecretOf("nats", "b1");
  ProjectSecret(credentials);
  auto data = logic::DecodeSecretData(credentials);
  ASSERT_TRUE(data.ok());
  auto full = logic::DecodeSecretData(w.SecretOf("nats", "b1"));
  EXPECT_EQ(*data, *full);
  EXPECT_TRUE(api::IsPacked(credentials["data"]));
  EXPECT_EQ(credentials["metadata"].size(), 5u);  // name, namespace, rv, labels, owners
}

}  // namespace
}  // namespace switchboard::authorizer
