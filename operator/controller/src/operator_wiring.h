// The one place the operator's caches are wired to what reacts to them:
// per cache, in this order, the RefusedSet of its kind (backends, servers),
// the rules context's
// invalidation (backends, servers), the ConfigIndex's feed (config Secrets
// only, never a callout Secret), then the wake table (wake_table.h). A
// woken reconcile therefore always reads a rules context and a ConfigIndex
// that have seen the event that woke it.
#pragma once

#include <functional>
#include <string>

#include "config_index.h"
#include "secret_cache.h"
#include "switchboard/kube/multi_store.h"
#include "switchboard/rules/context_cache.h"
#include "wake_table.h"

namespace switchboard::operator_controller {

struct OperatorCaches {
  kube::MultiStore* backends = nullptr;
  kube::MultiStore* servers = nullptr;
  SecretCache* secrets = nullptr;  // managed-by=switchboard only
};

// What the shared rules refused, one set per kind they judge.
struct RefusedSets {
  RefusedSet* backends = nullptr;
  RefusedSet* servers = nullptr;
};

// The lookups the map functions read, over the caches.
WakeLookup LookupOf(const OperatorCaches& caches, const RefusedSets& refused);

// Installs every handler on the caches (before they start). Everything
// passed must outlive the caches' informers.
void WireCaches(const OperatorCaches& caches, ConfigIndex* configs,
                rules::ContextCache* rules_context, RefusedSets refused,
                std::function<void(Kind, const std::string&)> enqueue);

}  // namespace switchboard::operator_controller
