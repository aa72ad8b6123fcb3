// The operator's validation step: the shared rules (rules/), judging an
// object against the same context the webhook builds from its cache
// (rules::ContextCache), here over the operator's caches of every
// PubSubBackend and NatsServer. The index is rebuilt once per change of
// what the rules read, not per reconcile.
#pragma once

#include <memory>

#include "switchboard/kube/multi_store.h"
#include "switchboard/rules/context_cache.h"

namespace switchboard::operator_controller {

// A ContextCache over `backends` and `servers` (which must outlive it), their
// objects shaped as the API shows them. The caller invalidates it on every
// event of either cache (the wiring does).
std::unique_ptr<rules::ContextCache> NewRulesContext(const kube::MultiStore* backends,
                                                     const kube::MultiStore* servers);
// The same over any list of objects in the caches' shape.
std::unique_ptr<rules::ContextCache> NewRulesContextOver(rules::ContextCache::List list);

// What the operator's rules step says of a cached PubSubBackend or
// NatsServer: what the webhook and `switchboard validate --context` say of
// it against the same set of objects.
rules::Report ValidateCached(const nlohmann::json& cached, const rules::ContextSnapshot& context);

}  // namespace switchboard::operator_controller
