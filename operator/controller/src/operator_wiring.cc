#include "operator_wiring.h"

#include "switchboard/api/views.h"

namespace switchboard::operator_controller {
namespace {

// A handler that calls `f` with each event.
kube::StoreEventHandler Observer(std::function<void(const CacheEvent&)> f) {
  kube::StoreEventHandler h;
  h.on_add = [f](const kube::ObjectPtr& o) { f({nullptr, o.get()}); };
  h.on_update = [f](const kube::ObjectPtr& a, const kube::ObjectPtr& b) { f({a.get(), b.get()}); };
  h.on_delete = [f](const kube::ObjectPtr& o) { f({o.get(), nullptr}); };
  return h;
}

}  // namespace

WakeLookup LookupOf(const OperatorCaches& caches, const RefusedSets& refused) {
  WakeLookup l;
  l.backend = [b = caches.backends](const std::string& key) { return b->Get(key); };
  l.server = [s = caches.servers](const std::string& key) { return s->Get(key); };
  l.backends = [b = caches.backends] { return b->List(); };
  if (RefusedSet* set = refused.backends) l.refused_backends = [set] { return set->Keys(); };
  if (RefusedSet* set = refused.servers) l.refused_servers = [set] { return set->Keys(); };
  return l;
}

void WireCaches(const OperatorCaches& caches, ConfigIndex* configs,
                rules::ContextCache* rules_context, RefusedSets refused,
                std::function<void(Kind, const std::string&)> enqueue) {
  const WakeLookup lookup = LookupOf(caches, refused);
  for (auto [cache, set] :
       {std::pair{caches.backends, refused.backends}, std::pair{caches.servers, refused.servers}}) {
    if (set) cache->AddEventHandler(Observer([set](const CacheEvent& e) { set->Observe(e); }));
  }
  if (rules_context) {
    auto invalidate = Observer(
        [rules_context](const CacheEvent& e) { rules_context->Observe(e.before, e.after); });
    caches.backends->AddEventHandler(invalidate);
    caches.servers->AddEventHandler(invalidate);
  }
  if (configs) {
    // The index sees every content of a config Secret as it arrives, so a
    // reloader's report of any of them can be placed before or after a
    // user's first one.
    caches.secrets->AddEventHandler(Observer([configs, lookup, caches](const CacheEvent& e) {
      if (!e.after) return;
      if (kube::ObjectPtr server = ServerOfConfigSecret(*e.after, lookup)) {
        // The record is this event's state: the handler runs on the
        // watcher's thread before it applies the next event.
        auto record = caches.secrets->Record(api::NamespaceOf(*e.after), api::NameOf(*e.after));
        configs->Get(record.get(), api::NatsServerView(*server).config_key());
      }
    }));
  }
  const auto& table = WakeTable();
  caches.backends->AddEventHandler(WakeHandler(Kind::kBackend, table, lookup, enqueue));
  caches.servers->AddEventHandler(WakeHandler(Kind::kServer, table, lookup, enqueue));
  caches.secrets->AddEventHandler(WakeHandler(Kind::kSecret, table, lookup, enqueue));
}

}  // namespace switchboard::operator_controller
