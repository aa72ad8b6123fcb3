// The status of an object and the events of its transitions, written
// together.
#pragma once

#include <optional>
#include <vector>

#include "switchboard/kube/resource.h"
#include "switchboard/operator_controller/reconcilers.h"
#include "switchboard/operator_logic/conditions.h"

namespace switchboard::operator_controller {

// Writes `status` as the status subresource of `obj` (a merge patch; a
// member of the stored status that `status` lacks is nulled) when it
// differs from the stored one, conditional on `version` (the version read,
// as a rule): the patch carries it as metadata.resourceVersion, and the API
// server refuses a stale one (kConflict, which the controller retries once its cache has
// caught up). Only a write that stored the transition announces `events`
// (Warning or Normal as each says; absent ones skipped), so a reconcile
// that read an old version from a lagging cache can neither undo a newer
// status nor announce a transition a second time, and no memory of past
// announcements is needed. A deleted object is no error (nothing written,
// nothing announced).
Status WriteStatusAndAnnounce(
    const ReconcileContext& ctx, const kube::ResourceRef& resource, const nlohmann::json& obj,
    std::string_view version, const nlohmann::json& status,
    const std::vector<std::optional<operator_logic::StatusEvent>>& events);

}  // namespace switchboard::operator_controller
