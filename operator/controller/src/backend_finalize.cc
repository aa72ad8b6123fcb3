// The finalizer flow of a PubSubBackend being deleted: wait until the
// server's config Secret no longer holds its users (the render leaves
// deleting backends out), delete the Secrets it owns, drop the finalizer.
// A server in AuthCallout mode has no file to wait for: the authorizer
// refuses the user once its credentials Secret is gone.
// Bounded: ServerGone, ConfigTargetMissing or CleanupTimedOut end the wait
// with a Warning event (operator_logic::DecideFinalize).
#include "backend_step.h"
#include "config_index.h"
#include "credential_sightings.h"
#include "probe_pool.h"
#include "secret_cache.h"
#include "secret_io.h"
#include "switchboard/api/constants.h"
#include "switchboard/api/names.h"
#include "switchboard/common/log.h"
#include "switchboard/operator_logic/backend_policy.h"
#include "switchboard/operator_logic/objects.h"
#include "switchboard/operator_logic/retry_timing.h"
#include "switchboard/operator_logic/time_util.h"

namespace switchboard::operator_controller {
namespace logic = ::switchboard::operator_logic;
namespace reasons = ::switchboard::operator_logic::reasons;
using namespace std::chrono_literals;

namespace {

// Whether the config Secret still holds a user of the backend's stored
// credentials (none when they are missing, foreign or unreadable).
bool UsersStillRendered(const ReconcileContext& ctx, const api::BackendView& view,
                        const std::string& uid, const SecretRecord* config,
                        const api::NatsServerView& server) {
  auto stored = ReadStoredCredentials(ctx, view, uid);
  const auto* creds = std::get_if<StoredCredentials>(&stored);
  if (creds == nullptr || !creds->state) return false;
  for (const auto& u : logic::RenderedUsers(*creds->state)) {
    if (ConfigHolds(ctx, config, server, u.username, u.bcrypt)) return true;
  }
  return false;
}

}  // namespace

Result<Action> BackendReconciler::Impl::Finalize() {
  // Read.
  logic::FinalizeFacts f;
  f.has_finalizer = HasFinalizer(obj, logic::kFinalizer) || HasFinalizer(obj, kLegacyFinalizer);
  if (auto bound = view.bound_server(); f.has_finalizer && bound) {
    f.server = bound->ToString();
    kube::ObjectPtr server_obj = ctx.servers->Get(bound->ns, bound->name);
    f.server_exists = server_obj != nullptr;
    if (server_obj) {
      api::NatsServerView server(*server_obj);
      const auto timing = logic::RetryTimingFor({ctx.probe_interval, ctx.authorizer_recheck});
      if (std::holds_alternative<logic::ThroughFile>(UserPathOf(server, timing))) {
        logic::RemovalFromFile file;
        SecretCache::RecordPtr config =
            ctx.secrets->Record(server.ns(), server.config_secret_name());
        file.config_exists = config != nullptr;
        file.users_rendered = config && UsersStillRendered(ctx, view, uid, config.get(), server);
        file.cleanup_timeout = ctx.cleanup_timeout;
        if (auto since = logic::ParseTime(obj["metadata"].value("deletionTimestamp", ""));
            since.ok()) {
          file.deleting_for =
              std::chrono::duration_cast<std::chrono::milliseconds>(logic::Clock::now() - *since);
        }
        f.removal = file;
      } else {
        f.removal = logic::RemovalByAuthorizers{};  // no file to wait for
      }
    }
  }

  // Decide, apply, report.
  const logic::FinalizeStep step = logic::DecideFinalize(f);
  if (step.step == logic::Finalize::kNothing) return Action::AwaitChange();
  if (step.step == logic::Finalize::kWait) {
    ctx.enqueue_server(f.server);
    return Action::RequeueAfter(step.recheck);
  }
  kube::ObjectPtr env = ctx.secrets->Get(view.ns(), view.env_secret_name());
  SB_RETURN_IF_ERROR(DeleteOwnedSecret(ctx.client, env.get(), uid));
  if (view.kind() == api::kBackendNats) {
    kube::ObjectPtr creds =
        ctx.secrets->Get(view.ns(), api::DefaultCredentialsSecretName(view.name()));
    SB_RETURN_IF_ERROR(DeleteOwnedSecret(ctx.client, creds.get(), uid));
  }
  if (!step.reason.empty()) Event(step.warning, step.reason, step.message);
  SB_RETURN_IF_ERROR(RemoveFinalizers());
  ctx.probes->Forget(key);
  ctx.credential_sightings->Forget(key);
  log::Info("backend", "finalized",
            {{"key", key}, {"skipped", step.warning ? step.reason : std::string()}});
  return Action::AwaitChange();
}

}  // namespace switchboard::operator_controller
