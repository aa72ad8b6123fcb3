// A NatsServer's reconcile: the prologue every mode shares, then the
// provisioner of the server's mode (provisioner.h).
#include "callout_provisioner.h"
#include "include_file_provisioner.h"
#include "operator_mode_provisioner.h"
#include "provisioner.h"
#include "rules_context.h"
#include "switchboard/api/views.h"
#include "switchboard/operator_controller/reconcilers.h"
#include "switchboard/operator_logic/conditions.h"
#include "switchboard/operator_logic/time_util.h"
#include "switchboard/rules/refusal.h"
#include "switchboard/rules/validate.h"
#include "wake_table.h"

namespace switchboard::operator_controller {
namespace logic = ::switchboard::operator_logic;
namespace reasons = ::switchboard::operator_logic::reasons;

ServerReconciler::ServerReconciler(ReconcileContext ctx) : ctx_(std::move(ctx)) {
  // The first is the default mode's: it also reports a server whose mode
  // none serves (the rules refuse it). A mode's variant comes before the
  // mode's general provisioner: the first that serves a server is its own.
  provisioners_.push_back(std::make_unique<IncludeFileProvisioner>(ctx_));
  provisioners_.push_back(std::make_unique<OperatorModeProvisioner>(ctx_));
  provisioners_.push_back(std::make_unique<CalloutProvisioner>(ctx_));
}
ServerReconciler::~ServerReconciler() = default;

namespace {

void EnqueueBound(const ReconcileContext& ctx, const std::string& server_key) {
  for (const auto& key : BackendsBoundTo(server_key, ctx.backends->List(), false)) {
    ctx.enqueue_backend(key);
  }
}

}  // namespace

Provisioner& ServerReconciler::ProvisionerOf(const api::NatsServerView& server) {
  for (auto& p : provisioners_) {
    if (p->Serves(server)) return *p;
  }
  return *provisioners_.front();
}

Result<Action> ServerReconciler::Reconcile(const std::string& key) {
  kube::ObjectPtr ptr = ctx_.servers->Get(key);
  if (!ptr) {
    for (auto& p : provisioners_) p->Forget(key);
    EnqueueBound(ctx_, key);  // they learn that their server is gone
    return Action::AwaitChange();
  }
  const json& obj = *ptr;
  ServerCall call{ctx_,
                  key,
                  obj,
                  api::NatsServerView(obj),
                  GenerationOf(obj),
                  UidOf(obj),
                  logic::FormatTime(logic::Clock::now())};
  Provisioner& mine = ProvisionerOf(call.view);
  if (auto later = mine.Defer(call)) return *later;
  for (auto& p : provisioners_) {
    if (p.get() != &mine) p->Retire(key);
  }

  // Judged as the webhook judges it: against every server and backend the
  // caches hold, so a Secret name another object claims is reported here
  // whatever the mode, before anything is written.
  rules::Report report = ValidateCached(obj, *ctx_.rules_context->Snapshot());
  if (!report.ok()) {
    std::string msg;
    for (const auto& f : report.errors) msg += (msg.empty() ? "" : "; ") + f.ToString();
    const std::string_view reason =
        rules::OnlySecretCollisions(report) ? reasons::kSecretConflict : reasons::kInvalidSpec;
    SB_RETURN_IF_ERROR(WriteServerReport(call, mine.Refused(call, reason, msg)));
    return Action::Terminal();
  }
  return mine.Provision(call);
}

}  // namespace switchboard::operator_controller
