// What Switchboard's informer caches keep of each object (installed as
// kube::WatcherOptions::transform): only the fields a reconcile or an event
// handler reads, so 1,000 backends with their 2,000 Secrets cost the cache
// a fraction of the API server's JSON. Pure; each function edits in place.
//
// One shape per cached object. The two members that dominate the cache as
// a DOM (an object's status, a Secret's data) are kept packed, and a packed
// member is not a second API shape a reader could mistake: it is a JSON
// binary value (api/packed.h), so reading it as a DOM (obj["status"]
// ["conditions"], .value, .at) throws instead of silently reading something
// else. Every reader of a cached object reads those members through
// api::StatusOf, api::ObjectMember and api::ApiShaped, which read the API's
// objects alike; nothing outside this file and api/packed.h knows which
// members are packed. Packed rather than a typed record per kind because
// the reconcilers, the authorizer and the rules share code with the webhook
// and the CLI, which read objects straight from the API; one JSON shape
// with one accessor keeps that code single.
#pragma once

#include <nlohmann/json.hpp>

namespace switchboard::kube {

using json = nlohmann::json;

// An owned Secret: metadata.{name, namespace, uid, resourceVersion, labels,
// annotations, deletionTimestamp}, ownerReferences as {kind, name, uid}
// (ownership and the owner to wake), and data (decoded by reconcile and
// compared before a write) packed: an env Secret's five keys cost about
// three times as much heap as a DOM as they do as text. Dropped: type,
// creationTimestamp, the rest of each owner reference, everything else.
void CompactOwnedSecret(json& secret);

// A PubSubBackend or NatsServer: apiVersion and kind (events name them),
// spec, status, and metadata.{name, namespace, uid, resourceVersion,
// generation, labels, annotations, finalizers, deletionTimestamp,
// creationTimestamp}. The status is packed: a reconcile reads it once (to
// compare and to carry condition times over), and as a DOM it was most of
// the cache (a backend's conditions cost about six times their text).
void CompactCustomObject(json& object);

}  // namespace switchboard::kube
