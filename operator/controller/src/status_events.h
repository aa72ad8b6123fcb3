// The events of a status transition, announced once per transition.
#pragma once

#include <optional>
#include <vector>

#include "switchboard/operator_controller/reconcilers.h"
#include "switchboard/operator_logic/conditions.h"

namespace switchboard::operator_controller {

// Records each event (Warning or Normal as it says) on `obj`, except one
// already announced from this very version of the object (its uid and
// resourceVersion) within RecentWrites::kKeep: a reconcile woken by another
// change before the cache has its own status write sees the old status
// again, and would count one transition twice. Without a recorder, nothing.
void AnnounceStatusEvents(const ReconcileContext& ctx, const nlohmann::json& obj,
                          const std::vector<std::optional<operator_logic::StatusEvent>>& events);

}  // namespace switchboard::operator_controller
