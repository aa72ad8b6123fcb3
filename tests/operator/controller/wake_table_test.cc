// The wake table: each map function over named cases, the table's rows,
// and the handler that runs them.
#include "wake_table.h"

#include <gtest/gtest.h>

#include <map>

#include "switchboard/testing/objects.h"

namespace {

using nlohmann::json;
using namespace switchboard::operator_controller;
using Keys = std::vector<std::string>;

using switchboard::testing::BackendBuilder;
using switchboard::testing::SecretBuilder;
using switchboard::testing::ServerBuilder;

// `server` "ns/name", or "" for no serverRef.
json Backend(const std::string& ns, const std::string& name, const std::string& server) {
  BackendBuilder b(ns, name);
  b.Generation(1).Prefix("hatchet." + name).NoServer();
  if (!server.empty()) {
    auto slash = server.find('/');
    b.Server(server.substr(0, slash), server.substr(slash + 1));
  }
  return b;
}
json WithReady(json b, const std::string& status, const std::string& reason, int64_t gen = 1) {
  b["status"] = {{"conditions", json::array({{{"type", "Ready"},
                                              {"status", status},
                                              {"reason", reason},
                                              {"observedGeneration", gen}}})}};
  return b;
}
json Server(const std::string& ns, const std::string& name) {
  return ServerBuilder(ns, name).Generation(1).Url("nats://n:4222");
}
json OwnedSecret(const std::string& ns, const std::string& name, const std::string& owner_kind,
                 const std::string& owner) {
  return SecretBuilder(ns, name).Owner(owner_kind, owner);
}

// Caches for the lookups.
struct Caches {
  std::map<std::string, switchboard::kube::ObjectPtr> backends, servers;
  std::vector<std::string> refused_backends, refused_servers;
  void Add(const json& o) {
    std::string key = o["metadata"]["namespace"].get<std::string>() + "/" +
                      o["metadata"]["name"].get<std::string>();
    (o["kind"] == "NatsServer" ? servers : backends)[key] = std::make_shared<const json>(o);
  }
  WakeLookup Lookup() const {
    WakeLookup l;
    l.backend = [this](const std::string& k) -> switchboard::kube::ObjectPtr {
      auto it = backends.find(k);
      return it == backends.end() ? nullptr : it->second;
    };
    l.server = [this](const std::string& k) -> switchboard::kube::ObjectPtr {
      auto it = servers.find(k);
      return it == servers.end() ? nullptr : it->second;
    };
    l.backends = [this] {
      std::vector<switchboard::kube::ObjectPtr> out;
      for (const auto& [k, v] : backends) out.push_back(v);
      return out;
    };
    l.refused_backends = [this] { return refused_backends; };
    l.refused_servers = [this] { return refused_servers; };
    return l;
  }
};

CacheEvent Add(const json& o) { return {nullptr, &o}; }
CacheEvent Update(const json& a, const json& b) { return {&a, &b}; }
CacheEvent Delete(const json& o) { return {&o, nullptr}; }

struct Case {
  const char* name;
  MapFn map;
  std::function<CacheEvent()> event;
  Keys want;
};

TEST(WakeTable, MapFunctions) {
  Caches c;
  const json srv = Server("nats", "shared");
  c.Add(srv);
  const json waiting = Backend("team-a", "new", "nats/shared");  // no Ready yet
  const json ready = WithReady(Backend("team-a", "ready", "nats/shared"), "True", "Probed");
  const json stale = WithReady(Backend("team-a", "stale", "nats/shared"), "True", "Probed", 0);
  json deleting = WithReady(Backend("team-a", "going", "nats/shared"), "True", "Probed");
  deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  const json elsewhere = Backend("team-b", "other", "nats/second");
  const json refused =
      WithReady(Backend("team-b", "refused", "nats/shared"), "False", "InvalidSpec");
  for (const json* b :
       {&waiting, &ready, &stale, static_cast<const json*>(&deleting), &elsewhere, &refused}) {
    c.Add(*b);
  }
  c.refused_backends = {"team-b/refused"};
  // A refused server named like a backend: keys of the two kinds never
  // cancel each other.
  c.refused_servers = {"nats/held", "team-a/new"};

  const json b1 = Backend("team-a", "new", "nats/shared");
  json b1_status = WithReady(b1, "False", "ConfigNotReloaded");  // a status write only
  json b1_labelled = b1;
  b1_labelled["metadata"]["labels"] = {{"x", "y"}};
  json b1_finalizer = b1;
  b1_finalizer["metadata"]["finalizers"] = json::array({"pubsub.switchboard.dev/cleanup"});
  json b1_moved = b1;
  b1_moved["spec"]["nats"]["serverRef"]["name"] = "second";
  b1_moved["metadata"]["generation"] = 2;
  const json rabbit = {{"kind", "PubSubBackend"},
                       {"metadata", {{"name", "r"}, {"namespace", "team-a"}}},
                       {"spec", {{"kind", "rabbitmq"}}}};

  json srv_status = srv;
  srv_status["status"] = {{"installations", 3}};
  json srv_spec = srv;
  srv_spec["metadata"]["generation"] = 2;

  const json creds = OwnedSecret("team-a", "ready-nats-credentials", "PubSubBackend", "ready");
  const json env_of_gone = OwnedSecret("team-a", "gone-pubsub-env", "PubSubBackend", "gone");
  const json config = OwnedSecret("nats", "shared-switchboard", "NatsServer", "shared");
  const json callout = OwnedSecret("nats", "shared-auth-callout", "NatsServer", "shared");
  const json held = Server("nats", "held");
  const json unowned = {{"kind", "Secret"}, {"metadata", {{"name", "x"}, {"namespace", "nats"}}}};

  const std::vector<Case> cases = {
      {"backend added wakes itself", BackendItself, [&] { return Add(b1); }, {"team-a/new"}},
      {"backend deleted wakes itself", BackendItself, [&] { return Delete(b1); }, {"team-a/new"}},
      {"a status write wakes nobody", BackendItself, [&] { return Update(b1, b1_status); }, {}},
      {"our finalizer wakes nobody", BackendItself, [&] { return Update(b1, b1_finalizer); }, {}},
      {"a label wakes the backend",
       BackendItself,
       [&] { return Update(b1, b1_labelled); },
       {"team-a/new"}},
      {"backend added wakes its server",
       ServersOfBackend,
       [&] { return Add(b1); },
       {"nats/shared"}},
      {"a move wakes the old and the new server",
       ServersOfBackend,
       [&] { return Update(b1, b1_moved); },
       {"nats/shared", "nats/second"}},
      {"a status write wakes no server",
       ServersOfBackend,
       [&] { return Update(b1, b1_status); },
       {}},
      {"an unbound backend wakes no server", ServersOfBackend, [&] { return Add(rabbit); }, {}},
      {"server added wakes itself", ServerItself, [&] { return Add(srv); }, {"nats/shared"}},
      {"server status write wakes nobody",
       ServerItself,
       [&] { return Update(srv, srv_status); },
       {}},
      {"server spec change wakes itself",
       ServerItself,
       [&] { return Update(srv, srv_spec); },
       {"nats/shared"}},
      {"server spec change wakes every bound backend",
       BackendsOfServer,
       [&] { return Update(srv, srv_spec); },
       {"team-a/going", "team-a/new", "team-a/ready", "team-a/stale", "team-b/refused"}},
      {"server deleted wakes every bound backend",
       BackendsOfServer,
       [&] { return Delete(srv); },
       {"team-a/going", "team-a/new", "team-a/ready", "team-a/stale", "team-b/refused"}},
      {"server status write wakes no backend",
       BackendsOfServer,
       [&] { return Update(srv, srv_status); },
       {}},
      {"owned Secret wakes its backend",
       OwnerBackend,
       [&] { return Add(creds); },
       {"team-a/ready"}},
      {"a server's Secret wakes no backend owner", OwnerBackend, [&] { return Add(config); }, {}},
      {"credentials Secret wakes its backend's server",
       ServerOfOwnerBackend,
       [&] { return Update(creds, creds); },
       {"nats/shared"}},
      {"a Secret of a backend not cached wakes no server",
       ServerOfOwnerBackend,
       [&] { return Delete(env_of_gone); },
       {}},
      {"config Secret wakes its server", OwnerServer, [&] { return Add(config); }, {"nats/shared"}},
      {"callout Secret wakes its server",
       OwnerServer,
       [&] { return Add(callout); },
       {"nats/shared"}},
      {"unowned Secret wakes nobody", OwnerServer, [&] { return Add(unowned); }, {}},
      {"config Secret wakes the backends waiting for it",
       BackendsAwaitingConfig,
       [&] { return Update(config, config); },
       {"team-a/going", "team-a/new", "team-a/stale", "team-b/refused"}},
      {"callout Secret wakes no waiting backend",
       BackendsAwaitingConfig,
       [&] { return Update(callout, callout); },
       {}},
      {"a backend's Secret is no config", BackendsAwaitingConfig, [&] { return Add(creds); }, {}},
      {"a spec change wakes the refused backends",
       RefusedBackends,
       [&] { return Update(b1, b1_moved); },
       {"team-b/refused"}},
      {"a deletion wakes the refused backends",
       RefusedBackends,
       [&] { return Delete(b1); },
       {"team-b/refused"}},
      {"a server's spec change wakes the refused backends",
       RefusedBackends,
       [&] { return Update(srv, srv_spec); },
       {"team-b/refused"}},
      {"a status write wakes no refused backend",
       RefusedBackends,
       [&] { return Update(b1, b1_status); },
       {}},
      {"a refused backend does not wake itself",
       RefusedBackends,
       [&] { return Delete(refused); },
       {}},
      {"a backend's deletion wakes the refused servers",
       RefusedServers,
       [&] { return Delete(b1); },
       {"nats/held", "team-a/new"}},
      {"a server's spec change wakes the other refused servers",
       RefusedServers,
       [&] { return Update(srv, srv_spec); },
       {"nats/held", "team-a/new"}},
      {"a server's status write wakes no refused server",
       RefusedServers,
       [&] { return Update(srv, srv_status); },
       {}},
      {"a refused server does not wake itself",
       RefusedServers,
       [&] { return Delete(held); },
       {"team-a/new"}},
  };
  const WakeLookup lookup = c.Lookup();
  for (const auto& tc : cases) {
    CacheEvent e = tc.event();
    EXPECT_EQ(tc.map(e, lookup), tc.want) << tc.name;
  }
}

TEST(WakeTable, WaitsForConfig) {
  json b = Backend("a", "b", "nats/s");
  EXPECT_TRUE(WaitsForConfig(b)) << "no Ready yet";
  EXPECT_FALSE(WaitsForConfig(WithReady(b, "True", "Probed")));
  EXPECT_TRUE(WaitsForConfig(WithReady(b, "True", "Probed", 0))) << "older generation";
  EXPECT_TRUE(WaitsForConfig(WithReady(b, "False", "ConfigNotReloaded")));
  json rotating = WithReady(b, "True", "Probed");
  rotating["status"]["rotation"] = {{"phase", "Staged"}};
  EXPECT_TRUE(WaitsForConfig(rotating));
  json deleting = WithReady(b, "True", "Probed");
  deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  EXPECT_TRUE(WaitsForConfig(deleting));
}

TEST(WakeTable, RefusedSetFollowsTheReadyReason) {
  RefusedSet s;
  json b = Backend("a", "b", "nats/s");
  json refused = WithReady(b, "False", "InvalidSpec");
  json ready = WithReady(b, "True", "Probed");
  s.Observe(Add(refused));
  EXPECT_EQ(s.Keys(), Keys{"a/b"});
  s.Observe(Update(refused, ready));
  EXPECT_EQ(s.Keys(), Keys{});
  s.Observe(Update(ready, refused));
  s.Observe(Delete(refused));
  EXPECT_EQ(s.Keys(), Keys{});
  // A Secret name another object claims is refused as SecretConflict.
  json conflict = WithReady(b, "False", "SecretConflict");
  s.Observe(Add(conflict));
  EXPECT_EQ(s.Keys(), Keys{"a/b"});
  s.Observe(Update(conflict, WithReady(b, "False", "ServerUnreachable")));
  EXPECT_EQ(s.Keys(), Keys{});
}

TEST(WakeTable, EveryRowHasAMapFunctionAndAReason) {
  const auto& table = WakeTable();
  ASSERT_FALSE(table.empty());
  for (const auto& r : table) {
    EXPECT_NE(r.map, nullptr);
    EXPECT_FALSE(r.why.empty());
    EXPECT_NE(r.wakes, Kind::kSecret) << "no reconciler of Secrets";
  }
}

TEST(WakeTable, HandlerRunsTheRowsOfItsKind) {
  Caches c;
  c.Add(Server("nats", "shared"));
  std::vector<std::pair<Kind, std::string>> woken;
  auto h = WakeHandler(Kind::kBackend, WakeTable(), c.Lookup(),
                       [&](Kind k, const std::string& key) { woken.emplace_back(k, key); });
  h.on_add(std::make_shared<const json>(Backend("team-a", "new", "nats/shared")));
  EXPECT_EQ(woken, (std::vector<std::pair<Kind, std::string>>{{Kind::kBackend, "team-a/new"},
                                                              {Kind::kServer, "nats/shared"}}));
  woken.clear();
  auto secrets = WakeHandler(Kind::kSecret, WakeTable(), c.Lookup(),
                             [&](Kind k, const std::string& key) { woken.emplace_back(k, key); });
  secrets.on_update(nullptr, std::make_shared<const json>(OwnedSecret("nats", "shared-auth-callout",
                                                                      "NatsServer", "shared")));
  EXPECT_EQ(woken, (std::vector<std::pair<Kind, std::string>>{{Kind::kServer, "nats/shared"}}));
}

TEST(WakeTable, ConfigSecretIsTheServersConfigNotItsCallout) {
  Caches c;
  json srv = Server("nats", "shared");
  srv["spec"]["config"] = {{"secretName", "custom"}};
  c.Add(srv);
  auto l = c.Lookup();
  EXPECT_NE(ServerOfConfigSecret(OwnedSecret("nats", "custom", "NatsServer", "shared"), l),
            nullptr);
  EXPECT_EQ(
      ServerOfConfigSecret(OwnedSecret("nats", "shared-switchboard", "NatsServer", "shared"), l),
      nullptr);
  EXPECT_EQ(
      ServerOfConfigSecret(OwnedSecret("nats", "shared-auth-callout", "NatsServer", "shared"), l),
      nullptr);
  EXPECT_EQ(ServerOfConfigSecret(OwnedSecret("nats", "custom", "NatsServer", "gone"), l), nullptr);
}

}  // namespace
