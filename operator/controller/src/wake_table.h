// Who wakes whom: every cache event the operator reacts to, as one table of
// "an event on kind K wakes the reconcilers of kind L via map function F".
// The map functions are pure over the event and read-only cache lookups;
// the wiring (operator_wiring.cc) installs one handler per cache that runs
// the table's rows for its kind. Wake-ups a reconcile itself asks for (a
// probe finished, a render verdict changed, a server is gone) go through
// ReconcileContext::enqueue_* and are not cache events.
#pragma once

#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/kube/store.h"

namespace switchboard::operator_controller {

enum class Kind { kBackend, kServer, kSecret };
std::string_view KindName(Kind kind);  // PubSubBackend, NatsServer, Secret

// One cache event: `before` is null on an add, `after` null on a delete.
struct CacheEvent {
  const nlohmann::json* before = nullptr;
  const nlohmann::json* after = nullptr;
  // The object as it is now (as it was, for a delete).
  const nlohmann::json& object() const { return after ? *after : *before; }
};

// What a map function may read besides the event (the caches; read-only).
struct WakeLookup {
  std::function<kube::ObjectPtr(const std::string& key)> backend;
  std::function<kube::ObjectPtr(const std::string& key)> server;
  std::function<std::vector<kube::ObjectPtr>()> backends;
  // Keys of the backends and of the servers the shared rules refused
  // (RefusedSet::Keys of each).
  std::function<std::vector<std::string>()> refused_backends;
  std::function<std::vector<std::string>()> refused_servers;
};

// namespace/name keys of the objects to reconcile.
using MapFn = std::vector<std::string> (*)(const CacheEvent&, const WakeLookup&);

struct WakeRule {
  Kind on;
  Kind wakes;
  MapFn map;
  std::string_view why;
};

// The table (wake_table.cc has it with each row's reason).
const std::vector<WakeRule>& WakeTable();

// ---- the map functions ----

// PubSubBackend -> PubSubBackend: the backend itself, on add, delete and any
// change a reconcile reacts to (MetaChanged).
std::vector<std::string> BackendItself(const CacheEvent& e, const WakeLookup& l);
// PubSubBackend -> NatsServer: the servers it was and is bound to (their
// file changes: bound, deleting, prefix, moved), on the same changes.
std::vector<std::string> ServersOfBackend(const CacheEvent& e, const WakeLookup& l);
// NatsServer -> NatsServer: the server itself, on add, delete and a spec
// change (generation).
std::vector<std::string> ServerItself(const CacheEvent& e, const WakeLookup& l);
// NatsServer -> PubSubBackend: every backend bound to it, on the same.
std::vector<std::string> BackendsOfServer(const CacheEvent& e, const WakeLookup& l);
// Secret -> PubSubBackend: the backend owning it.
std::vector<std::string> OwnerBackend(const CacheEvent& e, const WakeLookup& l);
// Secret -> NatsServer: the bound server of the backend owning it (its
// credentials Secret is what the render reads).
std::vector<std::string> ServerOfOwnerBackend(const CacheEvent& e, const WakeLookup& l);
// Secret -> NatsServer: the server owning it (its config Secret, its
// callout Secret).
std::vector<std::string> OwnerServer(const CacheEvent& e, const WakeLookup& l);
// Secret -> PubSubBackend: when it is a server's config Secret (not its
// callout Secret), the backends bound to that server that wait for it (not
// Ready for their generation, in a rotation, or being deleted). Ready ones
// are left alone: with 1,000 backends a config write would otherwise be
// 1,000 reconciles.
std::vector<std::string> BackendsAwaitingConfig(const CacheEvent& e, const WakeLookup& l);
// PubSubBackend or NatsServer -> PubSubBackend: when an object appears,
// goes, or changes what it claims, the other backends the shared rules
// refused (Ready=False InvalidSpec or SecretConflict;
// WakeLookup::refused_backends): a
// prefix, user name or Secret name the changed object held may be theirs
// now.
std::vector<std::string> RefusedBackends(const CacheEvent& e, const WakeLookup& l);
// PubSubBackend or NatsServer -> NatsServer: the same for the servers the
// shared rules refused (a config, callout or usage system Secret name
// another object held).
std::vector<std::string> RefusedServers(const CacheEvent& e, const WakeLookup& l);

// The keys of those of `backends` bound to `server` (a
// namespace/name key), as keys; with `only_waiting`, only those whose next
// step depends on the server's config Secret (WaitsForConfig).
std::vector<std::string> BackendsBoundTo(const std::string& server,
                                         const std::vector<kube::ObjectPtr>& backends,
                                         bool only_waiting);

// The objects of one kind the shared rules refused (Ready=False
// InvalidSpec, or SecretConflict), kept from that kind's cache events, so RefusedBackends and
// RefusedServers read one set rather than every object's status.
// Thread-safe.
class RefusedSet {
 public:
  void Observe(const CacheEvent& e);
  std::vector<std::string> Keys() const;

 private:
  mutable std::mutex mu_;
  std::set<std::string> keys_;  // guarded by mu_
};

// ---- predicates the map functions share ----

// Metadata a reconcile reacts to besides the spec (generation). Not the
// finalizers: adding ours would wake the backend a second time for nothing
// (a deletion changes deletionTimestamp).
bool MetaChanged(const nlohmann::json& a, const nlohmann::json& b);
// Whether a backend's next step depends on its server's config Secret.
bool WaitsForConfig(const nlohmann::json& backend);
// The NatsServer (from the lookup) whose config Secret `secret` is; null
// when it is no server's config Secret (its callout Secret, a backend's).
kube::ObjectPtr ServerOfConfigSecret(const nlohmann::json& secret, const WakeLookup& l);

// One store handler that runs every row of `table` for events on `kind`,
// passing the keys of each to `enqueue(row.wakes, key)`.
kube::StoreEventHandler WakeHandler(Kind kind, const std::vector<WakeRule>& table,
                                    WakeLookup lookup,
                                    std::function<void(Kind, const std::string&)> enqueue);

}  // namespace switchboard::operator_controller
