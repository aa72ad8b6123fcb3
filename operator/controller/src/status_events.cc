#include "status_events.h"

#include "k8s_util.h"
#include "secret_io.h"
#include "switchboard/operator_logic/objects.h"

namespace switchboard::operator_controller {

namespace {
// RecentWrites key of the events announced from one version of an object:
// two "/", so it never equals a Secret's "<ns>/<name>", and its own prefix,
// so it never equals a finalizer's key.
std::string AnnouncedKey(const nlohmann::json& obj, const std::string& reason) {
  return "announced/" + UidOf(obj) + "/" + reason;
}
}  // namespace

void AnnounceStatusEvents(const ReconcileContext& ctx, const nlohmann::json& obj,
                          const std::vector<std::optional<operator_logic::StatusEvent>>& events) {
  if (!ctx.recorder) return;
  for (const auto& ev : events) {
    if (!ev) continue;
    const nlohmann::json announced = {{"resourceVersion", kube::ResourceVersionOf(obj)},
                                      {"message", ev->message}};
    const std::string key = AnnouncedKey(obj, ev->reason);
    if (ctx.recent && ctx.recent->Fresh(key, announced)) continue;
    ctx.recorder->Record(obj, ev->warning ? kube::EventType::kWarning : kube::EventType::kNormal,
                         ev->reason, ev->message);
    if (ctx.recent) ctx.recent->Created(key, announced);
  }
}

}  // namespace switchboard::operator_controller
