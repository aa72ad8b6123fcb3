// The finalizer flow of a PubSubBackend being deleted: wait until the
// server's config Secret no longer holds its users (the render leaves
// deleting backends out), delete the Secrets it owns, drop the finalizer.
// Bounded: ServerGone, ConfigTargetMissing or CleanupTimedOut end the wait
// with a Warning event.
#include "backend_step.h"
#include "probe_pool.h"
#include "secret_io.h"
#include "switchboard/api/constants.h"
#include "switchboard/api/names.h"
#include "switchboard/common/log.h"
#include "switchboard/operator_logic/objects.h"
#include "switchboard/operator_logic/time_util.h"

namespace switchboard::operator_controller {
namespace logic = ::switchboard::operator_logic;
namespace reasons = ::switchboard::operator_logic::reasons;
using namespace std::chrono_literals;

namespace {

// Whether the config Secret still holds a user of the backend's stored
// credentials (none when they are missing, foreign or unreadable).
bool UsersStillRendered(const ReconcileContext& ctx, const api::BackendView& view,
                        const std::string& uid, const json* config,
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
  if (!HasFinalizer(obj, logic::kFinalizer) && !HasFinalizer(obj, kLegacyFinalizer)) {
    return Action::AwaitChange();
  }
  std::string_view skipped;  // why cleanup was skipped (event), empty when done
  std::string server_key;
  if (view.kind() == api::kBackendNats && !view.server().name.empty()) {
    server_key = view.server().ToString();
    kube::ObjectPtr server_obj = ctx.servers->Get(view.server().ns, view.server().name);
    if (!server_obj) {
      skipped = reasons::kServerGone;
    } else {
      api::NatsServerView server(*server_obj);
      kube::ObjectPtr config = ctx.secrets->Get(server.ns(), server.config_secret_name());
      if (!config) {
        skipped = reasons::kConfigTargetMissing;
      } else if (UsersStillRendered(ctx, view, uid, config.get(), server)) {
        ctx.enqueue_server(server_key);
        auto since = logic::ParseTime(obj["metadata"].value("deletionTimestamp", ""));
        if (!since.ok() || logic::Clock::now() - *since < ctx.cleanup_timeout) {
          return Action::RequeueAfter(500ms);
        }
        skipped = reasons::kCleanupTimedOut;
      }
    }
  }
  kube::ObjectPtr env = ctx.secrets->Get(view.ns(), view.env_secret_name());
  SB_RETURN_IF_ERROR(DeleteOwnedSecret(ctx.client, env.get(), uid));
  if (view.kind() == api::kBackendNats) {
    kube::ObjectPtr creds =
        ctx.secrets->Get(view.ns(), api::DefaultCredentialsSecretName(view.name()));
    SB_RETURN_IF_ERROR(DeleteOwnedSecret(ctx.client, creds.get(), uid));
  }
  if (!skipped.empty()) {
    Event(true, skipped,
          "finalizer removed without removing the NATS user from NatsServer " + server_key + " (" +
              (skipped == reasons::kServerGone            ? "the NatsServer is gone"
               : skipped == reasons::kConfigTargetMissing ? "its config Secret is gone"
                                                          : "no render without it in time") +
              ")");
  } else if (!server_key.empty()) {
    Event(false, reasons::kUserRemoved, "NATS user removed from NatsServer " + server_key);
  }
  SB_RETURN_IF_ERROR(RemoveFinalizers());
  ctx.probes->Forget(key);
  log::Info("backend", "finalized", {{"key", key}, {"skipped", std::string(skipped)}});
  return Action::AwaitChange();
}

}  // namespace switchboard::operator_controller
