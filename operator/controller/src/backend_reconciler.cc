// PubSubBackend reconcile: the order of the steps (reconcilers.h). Each step
// lives in its own file (backend_step.h).
#include "backend_step.h"
#include "probe_pool.h"
#include "rules_context.h"
#include "switchboard/api/constants.h"

namespace switchboard::operator_controller {
namespace logic = ::switchboard::operator_logic;
namespace reasons = ::switchboard::operator_logic::reasons;
using logic::Step;

Result<Action> BackendReconciler::Reconcile(const std::string& key) {
  kube::ObjectPtr ptr = ctx_.backends->Get(key);
  if (!ptr) {
    ctx_.probes->Forget(key);
    return Action::AwaitChange();
  }
  const json& obj = *ptr;
  Impl impl(ctx_, obj);
  if (IsDeleting(obj)) return impl.Finalize();
  SB_RETURN_IF_ERROR(impl.EnsureFinalizer());

  // Resolution first: a missing server or a namespace it does not admit has
  // its own reason (the shared rules would call both InvalidSpec).
  kube::ObjectPtr server;
  if (auto bound = impl.view.bound_server()) {
    const api::ObjectKey& sk = *bound;
    server = ctx_.servers->Get(sk.ns, sk.name);
    if (!server) {
      return impl.Fail(Step::kResolveServer, reasons::kServerNotFound,
                       "NatsServer " + sk.ToString() +
                           " (spec.nats.serverRef) does not exist or is not watched; create it "
                           "or fix the reference",
                       Action::AwaitChange());
    }
    if (!api::NatsServerView(*server).AllowsNamespace(impl.view.ns())) {
      return impl.Fail(Step::kResolveServer, reasons::kNamespaceNotAllowed,
                       "NatsServer " + sk.ToString() + " does not admit namespace " +
                           impl.view.ns() +
                           " (its spec.allowedNamespaces); add it there or use another server",
                       Action::AwaitChange());
    }
  }
  rules::Report report = ValidateCached(obj, *ctx_.rules_context->Snapshot());
  if (!report.ok()) return impl.Invalid(report);
  impl.Passed(Step::kValidate, "");
  if (server) impl.Passed(Step::kResolveServer, "");

  const std::string kind = impl.view.kind();
  if (kind == api::kBackendNats && server) return impl.Nats(*server);
  if (kind == api::kBackendRabbitmq) return impl.Rabbit();
  if (kind == api::kBackendPostgres) return impl.Postgres();
  return impl.Invalid({{{"spec.kind", "must be nats, rabbitmq or postgres"}}});
}

}  // namespace switchboard::operator_controller
