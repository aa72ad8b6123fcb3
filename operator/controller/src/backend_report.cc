// The report step of a PubSubBackend reconcile: the outcome of each step
// goes into logic::BackendStatusInput; the status (ComputeBackendStatus) and
// its Ready event are written only when they change.
#include "backend_step.h"
#include "status_events.h"
#include "switchboard/operator_logic/objects.h"
#include "switchboard/operator_logic/time_util.h"
#include "switchboard/rules/refusal.h"

namespace switchboard::operator_controller {
namespace logic = ::switchboard::operator_logic;
namespace reasons = ::switchboard::operator_logic::reasons;
using logic::Step;

BackendReconciler::Impl::Impl(const ReconcileContext& c, const json& o)
    : ctx(c),
      obj(o),
      view(o),
      key(view.key().ToString()),
      uid(UidOf(o)),
      status_version(kube::ResourceVersionOf(o)) {
  in.generation = GenerationOf(o);
  auto kind = logic::ParseBackendKind(view.kind());
  in.kind = kind.ok() ? *kind : logic::BackendKind::kNats;
}

void BackendReconciler::Impl::Event(bool warning, std::string_view reason,
                                    const std::string& message) {
  if (ctx.recorder) {
    ctx.recorder->Record(obj, warning ? kube::EventType::kWarning : kube::EventType::kNormal,
                         std::string(reason), message);
  }
}

Result<Action> BackendReconciler::Impl::Report(Action action) {
  const json previous = StatusOf(obj);
  json status = logic::ComputeBackendStatus(previous, in, logic::FormatTime(logic::Clock::now()));
  SB_RETURN_IF_ERROR(WriteStatusAndAnnounce(ctx, kube::resources::PubSubBackend(), obj,
                                            status_version, status,
                                            {logic::ReadyTransitionEvent(previous, status)}));
  return action;
}

Result<Action> BackendReconciler::Impl::Fail(Step step, std::string_view reason,
                                             const std::string& message, Action action) {
  in.steps.push_back({step, false, std::string(reason), message});
  return Report(action);
}

void BackendReconciler::Impl::Passed(Step step, std::string message) {
  in.steps.push_back({step, true, "", std::move(message)});
}

Result<Action> BackendReconciler::Impl::Invalid(const rules::Report& report) {
  std::string msg;
  for (const auto& f : report.errors) msg += (msg.empty() ? "" : "; ") + f.ToString();
  const std::string_view reason =
      rules::OnlySecretCollisions(report) ? reasons::kSecretConflict : reasons::kInvalidSpec;
  return Fail(Step::kValidate, reason, msg, Action::Terminal());
}

Result<Action> BackendReconciler::Impl::EnvConflict() {
  const std::string name = view.env_secret_name();
  return Fail(Step::kEnvSecret, reasons::kSecretConflict,
              logic::ForeignSecretMessage(view.ns(), name) +
                  "; or choose another name (spec.output.secretName)",
              Action::AwaitChange());
}

}  // namespace switchboard::operator_controller
