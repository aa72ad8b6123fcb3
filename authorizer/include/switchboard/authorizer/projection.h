// What the authorizer's informer caches keep of each object (installed as
// kube::WatcherOptions::transform): only the fields its decisions read,
// BuildServedServer and through it operator_logic::CollectDirectory and
// DecodeCalloutKeys, in the shapes they read them. The operator's cache
// shapes (kube/cache_shapes.h) keep what every reconcile reads (a backend's
// status, its labels and annotations, an env Secret's data); the authorizer
// caches every backend and managed Secret of the cluster and reads far less
// of each, so it keeps far less. Pure; each function edits in place.
//
// A field a decision starts to read must be kept here too:
// ProjectionTest builds the served server from full objects and from
// projected ones and requires the same result, field by field.
#pragma once

#include <nlohmann/json.hpp>

#include "switchboard/kube/field_mask.h"

namespace switchboard::authorizer {

// A PubSubBackend: metadata.{name, namespace, uid, resourceVersion,
// creationTimestamp, deletionTimestamp} (selection, ownership of its
// Secret, the older claim of a user name or prefix, being deleted) and
// spec.{kind, nats.{serverRef.{name, namespace}, subjectPrefix}} (bound to
// which server, with which prefix). Dropped: the status, labels,
// annotations, finalizers, every other spec field.
void ProjectBackend(nlohmann::json& backend);

// A NatsServer: metadata.{name, namespace, uid, resourceVersion} and the
// whole spec (url, provisioning, tls, allowedNamespaces: few objects, many
// fields read). Dropped: the status and the rest of the metadata.
void ProjectServer(nlohmann::json& server);

// A managed Secret: metadata.{name, namespace, resourceVersion}; for a
// credentials Secret (named <backend>-nats-credentials) also the
// managed-by label, the SecretConflict annotation and each owner
// reference's uid (CheckOwnership); and only the data keys the decisions decode (the
// credentials Secret's operator_logic::state_keys, the callout Secret's
// callout_keys), packed as kube::CompactOwnedSecret packs them. A data
// value that would not decode is kept whatever its key, so that
// DecodeSecretData refuses the projected Secret as it refuses the full one.
// An env or config Secret keeps only its name.
void ProjectSecret(nlohmann::json& secret);

// What the watchers parse of each object at all (kube::WatcherOptions::
// parse_keep), so that the API's whole object is never built: what the
// projection above keeps, and a Secret's whole data (ProjectSecret reads
// each value to decide). ProjectionTest requires the projection of a
// masked parse to be the projection of the whole object.
kube::FieldMask BackendFields();
kube::FieldMask ServerFields();
kube::FieldMask SecretFields();

}  // namespace switchboard::authorizer
