// What Switchboard's informer caches keep of each object (installed as
// kube::WatcherOptions::transform): only the fields a reconcile or an event
// handler reads, so 1,000 backends with their 2,000 Secrets cost the cache
// a fraction of the API server's JSON. Pure; each function edits in place.
#pragma once

#include <nlohmann/json.hpp>

namespace switchboard::kube {

using json = nlohmann::json;

// An owned Secret: metadata.{name, namespace, uid, resourceVersion, labels,
// annotations, deletionTimestamp}, ownerReferences as {kind, name, uid}
// (ownership and the owner to wake), and data (decoded by reconcile and
// compared before a write) as its JSON text, which
// operator_logic::DecodeSecretData and SecretDataObject read (an env
// Secret's five keys: ~1.2 KB as a DOM, ~0.4 KB as text). Dropped: type,
// creationTimestamp, the rest of each owner reference, everything else.
void CompactOwnedSecret(json& secret);

// A PubSubBackend or NatsServer: apiVersion and kind (events name them),
// spec, status, and metadata.{name, namespace, uid, resourceVersion,
// generation, labels, annotations, finalizers, deletionTimestamp,
// creationTimestamp}. The
// status is kept as its JSON text: a reconcile reads it once (to compare
// and to carry condition times over), and as a DOM it was most of the
// cache (a backend's five conditions: ~6.8 KB of heap, ~1.1 KB as text).
// Read it with UnpackedStatus (k8s_util's StatusOf does).
void CompactCustomObject(json& object);

// The status of an object from the cache (text) or from the API (object);
// an empty object when there is none or it does not parse.
json UnpackedStatus(const json& object);

// A copy of a cached PubSubBackend or NatsServer as the API shows it (the
// status an object again), for code shared with the webhook and the CLI:
// the rules check the status's type and read status.username.
json ApiShaped(const json& object);

}  // namespace switchboard::kube
