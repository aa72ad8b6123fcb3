#include "wake_table.h"

#include <optional>

#include "k8s_util.h"
#include "switchboard/api/constants.h"
#include "switchboard/api/views.h"
#include "switchboard/kube/resource.h"
#include "switchboard/operator_logic/conditions.h"

namespace switchboard::operator_controller {
namespace {

namespace conditions = operator_logic::condition_types;
namespace reasons = operator_logic::reasons;

std::string BoundServerOf(const json& backend) {
  auto s = api::BackendView(backend).bound_server();
  return s ? s->ToString() : "";
}

// The Ready condition of a cached object, read as the logic reads it.
std::optional<operator_logic::Condition> ReadyOf(const json& obj) {
  return operator_logic::ConditionOf(StatusOf(obj), conditions::kReady);
}

// Whether the event is one a backend's reconcile reacts to.
bool BackendMoved(const CacheEvent& e) {
  return !e.before || !e.after || MetaChanged(*e.before, *e.after);
}
bool ServerMoved(const CacheEvent& e) {
  return !e.before || !e.after || GenerationOf(*e.before) != GenerationOf(*e.after);
}

// namespace/name of the owners of `secret` with this kind.
std::vector<std::string> OwnersOf(const json& secret, std::string_view kind) {
  std::vector<std::string> out;
  auto meta = secret.find("metadata");
  if (meta == secret.end() || !meta->is_object()) return out;
  auto refs = meta->find("ownerReferences");
  if (refs == meta->end() || !refs->is_array()) return out;
  const std::string ns = api::NamespaceOf(secret);
  for (const auto& ref : *refs) {
    if (!ref.is_object() || ref.value("kind", "") != kind) continue;
    std::string name = ref.value("name", "");
    if (!name.empty()) out.push_back(ns + "/" + name);
  }
  return out;
}

std::vector<std::string> BackendsBoundTo(const std::string& server, const WakeLookup& l,
                                         bool only_waiting) {
  if (server.empty() || !l.backends) return {};
  return operator_controller::BackendsBoundTo(server, l.backends(), only_waiting);
}

// The refused objects of kind `kind` (keys from `refused`) other than the
// event's own object, when the event changes what an object claims.
std::vector<std::string> OthersRefused(const CacheEvent& e, std::string_view kind,
                                       const std::function<std::vector<std::string>()>& refused) {
  const std::string own_kind = api::KindOf(e.object());
  const bool backend = own_kind == api::kKindBackend;
  if (!(backend ? BackendMoved(e) : ServerMoved(e)) || !refused) return {};
  std::vector<std::string> out = refused();
  if (own_kind == kind) std::erase(out, kube::ObjectKeyOf(e.object()));
  return out;
}

}  // namespace

std::vector<std::string> BackendsBoundTo(const std::string& server,
                                         const std::vector<kube::ObjectPtr>& backends,
                                         bool only_waiting) {
  std::vector<std::string> out;
  for (const auto& b : backends) {
    if (BoundServerOf(*b) == server && (!only_waiting || WaitsForConfig(*b))) {
      out.push_back(kube::ObjectKeyOf(*b));
    }
  }
  return out;
}

std::string_view KindName(Kind kind) {
  switch (kind) {
    case Kind::kBackend:
      return api::kKindBackend;
    case Kind::kServer:
      return api::kKindServer;
    case Kind::kSecret:
      return "Secret";
  }
  return "";
}

bool MetaChanged(const json& a, const json& b) {
  const json& ma = a["metadata"];
  const json& mb = b["metadata"];
  return GenerationOf(a) != GenerationOf(b) ||
         ma.value("annotations", json()) != mb.value("annotations", json()) ||
         ma.value("deletionTimestamp", json()) != mb.value("deletionTimestamp", json()) ||
         ma.value("labels", json()) != mb.value("labels", json());
}

bool WaitsForConfig(const json& backend) {
  if (IsDeleting(backend)) return true;
  if (StatusOf(backend).contains("rotation")) return true;
  auto ready = ReadyOf(backend);
  if (!ready) return true;
  return ready->status != "True" || ready->observed_generation != GenerationOf(backend);
}

kube::ObjectPtr ServerOfConfigSecret(const json& secret, const WakeLookup& l) {
  if (!l.server) return nullptr;
  for (const auto& key : OwnersOf(secret, api::kKindServer)) {
    kube::ObjectPtr server = l.server(key);
    if (server && api::NatsServerView(*server).config_secret_name() == api::NameOf(secret)) {
      return server;
    }
  }
  return nullptr;
}

std::vector<std::string> BackendItself(const CacheEvent& e, const WakeLookup&) {
  if (!BackendMoved(e)) return {};
  return {kube::ObjectKeyOf(e.object())};
}

std::vector<std::string> ServersOfBackend(const CacheEvent& e, const WakeLookup&) {
  if (!BackendMoved(e)) return {};
  std::vector<std::string> out;
  for (const json* o : {e.before, e.after}) {
    if (!o) continue;
    std::string s = BoundServerOf(*o);
    if (!s.empty() && (out.empty() || out.front() != s)) out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::string> ServerItself(const CacheEvent& e, const WakeLookup&) {
  if (!ServerMoved(e)) return {};
  return {kube::ObjectKeyOf(e.object())};
}

std::vector<std::string> BackendsOfServer(const CacheEvent& e, const WakeLookup& l) {
  if (!ServerMoved(e)) return {};
  return BackendsBoundTo(kube::ObjectKeyOf(e.object()), l, false);
}

std::vector<std::string> OwnerBackend(const CacheEvent& e, const WakeLookup&) {
  return OwnersOf(e.object(), api::kKindBackend);
}

std::vector<std::string> ServerOfOwnerBackend(const CacheEvent& e, const WakeLookup& l) {
  std::vector<std::string> out;
  if (!l.backend) return out;
  for (const auto& key : OwnersOf(e.object(), api::kKindBackend)) {
    if (kube::ObjectPtr b = l.backend(key)) {
      if (std::string s = BoundServerOf(*b); !s.empty()) out.push_back(std::move(s));
    }
  }
  return out;
}

std::vector<std::string> OwnerServer(const CacheEvent& e, const WakeLookup&) {
  return OwnersOf(e.object(), api::kKindServer);
}

std::vector<std::string> BackendsAwaitingConfig(const CacheEvent& e, const WakeLookup& l) {
  kube::ObjectPtr server = ServerOfConfigSecret(e.object(), l);
  if (!server) return {};
  return BackendsBoundTo(kube::ObjectKeyOf(*server), l, true);
}

std::vector<std::string> RefusedBackends(const CacheEvent& e, const WakeLookup& l) {
  return OthersRefused(e, api::kKindBackend, l.refused_backends);
}

std::vector<std::string> RefusedServers(const CacheEvent& e, const WakeLookup& l) {
  return OthersRefused(e, api::kKindServer, l.refused_servers);
}

void RefusedSet::Observe(const CacheEvent& e) {
  const std::string key = kube::ObjectKeyOf(e.object());
  bool refused = false;
  if (e.after) {
    auto ready = ReadyOf(*e.after);
    // The rules' refusals: InvalidSpec, and SecretConflict for a Secret
    // name another object claims (also a Secret that is not ours, which a
    // wake costs one reconcile more).
    refused = ready && ready->status == "False" &&
              (ready->reason == reasons::kInvalidSpec || ready->reason == reasons::kSecretConflict);
  }
  std::lock_guard lock(mu_);
  if (refused) {
    keys_.insert(key);
  } else {
    keys_.erase(key);
  }
}

std::vector<std::string> RefusedSet::Keys() const {
  std::lock_guard lock(mu_);
  return {keys_.begin(), keys_.end()};
}

const std::vector<WakeRule>& WakeTable() {
  static const std::vector<WakeRule> table = {
      {Kind::kBackend, Kind::kBackend, BackendItself, "its spec or metadata changed"},
      {Kind::kBackend, Kind::kServer, ServersOfBackend,
       "the file of the server it was and is bound to changes"},
      {Kind::kBackend, Kind::kBackend, RefusedBackends,
       "what it claimed may be free for a backend the rules refused"},
      {Kind::kBackend, Kind::kServer, RefusedServers,
       "what it claimed may be free for a server the rules refused"},
      {Kind::kServer, Kind::kServer, ServerItself, "its spec changed"},
      {Kind::kServer, Kind::kBackend, BackendsOfServer,
       "what their server admits and how it is reached changed"},
      {Kind::kServer, Kind::kBackend, RefusedBackends,
       "what it claimed may be free for a backend the rules refused"},
      {Kind::kServer, Kind::kServer, RefusedServers,
       "what it claimed may be free for a server the rules refused"},
      {Kind::kSecret, Kind::kBackend, OwnerBackend, "one of its own Secrets changed"},
      {Kind::kSecret, Kind::kServer, ServerOfOwnerBackend,
       "a credentials Secret is what the render reads"},
      {Kind::kSecret, Kind::kServer, OwnerServer, "its config or callout Secret changed"},
      {Kind::kSecret, Kind::kBackend, BackendsAwaitingConfig,
       "the config Secret they wait for (to hold or drop their user) changed"},
  };
  return table;
}

kube::StoreEventHandler WakeHandler(Kind kind, const std::vector<WakeRule>& table,
                                    WakeLookup lookup,
                                    std::function<void(Kind, const std::string&)> enqueue) {
  std::vector<WakeRule> rows;
  for (const auto& r : table) {
    if (r.on == kind) rows.push_back(r);
  }
  auto run = [rows = std::move(rows), lookup = std::move(lookup),
              enqueue = std::move(enqueue)](const CacheEvent& e) {
    for (const auto& r : rows) {
      for (const auto& key : r.map(e, lookup)) enqueue(r.wakes, key);
    }
  };
  kube::StoreEventHandler h;
  h.on_add = [run](const kube::ObjectPtr& o) { run({nullptr, o.get()}); };
  h.on_update = [run](const kube::ObjectPtr& a, const kube::ObjectPtr& b) {
    run({a.get(), b.get()});
  };
  h.on_delete = [run](const kube::ObjectPtr& o) { run({o.get(), nullptr}); };
  return h;
}

}  // namespace switchboard::operator_controller
