// What the operator's informer caches keep of each object: only the fields
// a reconcile or an event handler reads, so 1,000 backends with their 2,000
// Secrets cost the cache a fraction of the API server's JSON. Each kind has
// two halves derived from one list of members: a parse mask
// (kube::WatcherOptions::parse_keep), so what nobody reads (managedFields,
// a Secret's type, most owner-reference fields) is never built in memory,
// and a transform (WatcherOptions::transform) that packs what it keeps.
//
// The two members that dominate the cache as a DOM (an object's status, a
// Secret's data) are kept packed, and a packed member is not a second API
// shape a reader could mistake: it is a JSON binary value (api/packed.h),
// so reading it as a DOM (obj["status"]["conditions"], .value, .at) throws
// instead of silently reading something else. Every reader of a cached
// object reads those members through api::StatusOf, api::ObjectMember and
// api::ApiShaped, which read the API's objects alike; nothing outside this
// file and api/packed.h knows which members are packed. Pure; each
// transform edits in place.
#pragma once

#include <nlohmann/json.hpp>

#include "switchboard/kube/field_mask.h"

namespace switchboard::operator_controller {

using json = nlohmann::json;

// An owned Secret: metadata.{name, namespace, uid, resourceVersion, labels,
// annotations, deletionTimestamp}, ownerReferences as {kind, name, uid}
// (ownership and the owner to wake), and data (decoded by reconcile and
// compared before a write) packed: an env Secret's five keys cost about
// three times as much heap as a DOM as they do as text. Dropped: type,
// creationTimestamp, the rest of each owner reference, everything else.
void CompactOwnedSecret(json& secret);
kube::FieldMask OwnedSecretFields();

// A PubSubBackend or NatsServer: apiVersion and kind (events name them),
// spec, status, and metadata.{name, namespace, uid, resourceVersion,
// generation, labels, annotations, finalizers, deletionTimestamp,
// creationTimestamp}. The status is packed: a reconcile reads it once (to
// compare and to carry condition times over), and as a DOM it was most of
// the cache (a backend's conditions cost about six times their text).
void CompactCustomObject(json& object);
kube::FieldMask CustomObjectFields();

}  // namespace switchboard::operator_controller
