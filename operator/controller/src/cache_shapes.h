// What the operator's informer caches keep of each object: only the fields
// a reconcile or an event handler reads, so 1,000 backends with their 2,000
// Secrets cost the caches a fraction of the API server's JSON. Each kind
// has a parse mask (kube::WatcherOptions::parse_keep), so what nobody reads
// (managedFields, a Secret's type, most owner-reference fields) is never
// built in memory. An owned Secret is then kept as a typed SecretRecord
// (secret_record.h, secret_cache.h); a PubSubBackend or NatsServer as a DOM
// shaped by a transform (WatcherOptions::transform) from the same list of
// members as its mask, so the two cannot disagree.
//
// The custom objects' status, which dominates them as a DOM, is kept
// packed, and a packed member is not a second API shape a reader could
// mistake: it is a JSON binary value (operator_logic/packed.h), so reading it as a DOM
// (obj["status"]["conditions"], .value, .at) throws instead of silently
// reading something else. Every reader of a cached object reads it through
// operator_logic::StatusOf, ObjectMember and ApiShaped, which read the API's
// objects alike. Pure; each transform edits in place.
#pragma once

#include <nlohmann/json.hpp>

#include "switchboard/kube/field_mask.h"

namespace switchboard::operator_controller {

using json = nlohmann::json;

// An owned Secret: metadata.{name, namespace, uid, resourceVersion, labels,
// annotations, deletionTimestamp}, ownerReferences as {kind, name, uid}
// (ownership and the owner to wake), and data (decoded by reconcile and
// compared before a write): what SecretRecordOf reads. Never built: type,
// creationTimestamp, the rest of each owner reference, everything else.
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
