#include "status_events.h"

#include "k8s_util.h"
#include "switchboard/api/metadata.h"

namespace switchboard::operator_controller {

Status WriteStatusAndAnnounce(
    const ReconcileContext& ctx, const kube::ResourceRef& resource, const nlohmann::json& obj,
    std::string_view version, const nlohmann::json& status,
    const std::vector<std::optional<operator_logic::StatusEvent>>& events) {
  const nlohmann::json current = StatusOf(obj);
  if (current == status) return Status::Ok();
  nlohmann::json patch = status;
  if (current.is_object()) {
    for (auto it = current.begin(); it != current.end(); ++it) {
      if (!patch.contains(it.key())) patch[it.key()] = nullptr;
    }
  }
  kube::PatchOptions po;
  po.subresource = "status";
  const nlohmann::json body = {{"metadata", {{"resourceVersion", std::string(version)}}},
                               {"status", patch}};
  auto r = ctx.client->Patch(resource, api::NamespaceOf(obj), api::NameOf(obj),
                             kube::PatchType::kMerge, body, po);
  if (!r.ok()) {
    // Deleted meanwhile: its next reconcile finds it gone.
    return r.status().code() == StatusCode::kNotFound ? Status::Ok() : r.status();
  }
  if (!ctx.recorder) return Status::Ok();
  for (const auto& ev : events) {
    if (!ev) continue;
    ctx.recorder->Record(obj, ev->warning ? kube::EventType::kWarning : kube::EventType::kNormal,
                         ev->reason, ev->message);
  }
  return Status::Ok();
}

}  // namespace switchboard::operator_controller
