// What the operator's informer caches keep of each object (installed as
// kube::WatcherOptions::transform): only the fields a reconcile or an event
// handler reads, so 1,000 backends with their 2,000 Secrets cost the cache
// a fraction of the API server's JSON. Pure; each function edits in place.
#pragma once

#include <nlohmann/json.hpp>

namespace switchboard::operator_controller {

using json = nlohmann::json;

// An owned Secret: metadata.{name, namespace, uid, resourceVersion, labels,
// annotations, deletionTimestamp}, ownerReferences as {kind, name, uid}
// (ownership and the owner to wake), and data (decoded by reconcile and
// compared before a write). Dropped: type, creationTimestamp, the rest of
// each owner reference, everything else.
void CompactOwnedSecret(json& secret);

// A PubSubBackend or NatsServer: apiVersion and kind (events name them),
// spec, status, and metadata.{name, namespace, uid, resourceVersion,
// generation, labels, annotations, finalizers, deletionTimestamp}.
void CompactCustomObject(json& object);

}  // namespace switchboard::operator_controller
