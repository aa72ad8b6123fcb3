// The NATS flow of a PubSubBackend reconcile: credentials (one step of the
// rotation state machine), the env Secret, the user in the server's config
// Secret, then the probe (backend_probe.cc).
#include "account_syncs.h"
#include "backend_step.h"
#include "config_index.h"
#include "secret_cache.h"
#include "switchboard/api/metadata.h"
#include "switchboard/api/names.h"
#include "switchboard/api/operator_mode.h"
#include "switchboard/api/values.h"
#include "switchboard/operator_logic/backend_policy.h"
#include "switchboard/operator_logic/env.h"
#include "switchboard/operator_logic/limits.h"
#include "switchboard/operator_logic/objects.h"
#include "switchboard/operator_logic/operator_mode_keys.h"
#include "switchboard/operator_logic/retry_timing.h"

namespace switchboard::operator_controller {
namespace logic = ::switchboard::operator_logic;
namespace reasons = ::switchboard::operator_logic::reasons;
using logic::Step;
using namespace std::chrono_literals;

std::chrono::milliseconds Until(logic::Time t) {
  auto d = std::chrono::duration_cast<std::chrono::milliseconds>(t - logic::Clock::now());
  return d < 100ms ? std::chrono::milliseconds(100ms) : d;
}

namespace {

// Reason of a credentials event, from the state before and after a step.
std::string_view CredentialEventReason(const logic::CredentialState& before,
                                       const logic::CredentialState& after) {
  if (before.phase != after.phase) {
    if (after.phase == logic::RotationPhase::kStaged) return reasons::kRotationStaged;
    if (after.phase == logic::RotationPhase::kRetiring) return reasons::kRotationSwitched;
    return reasons::kRotationCompleted;
  }
  return reasons::kRotationStaged;  // a note without a phase change: an ignored request
}

}  // namespace

Result<Action> BackendReconciler::Impl::Nats(const json& server_obj) {
  api::NatsServerView server(server_obj);
  const std::string server_key = server.key().ToString();
  const logic::RetryTiming timing =
      logic::RetryTimingFor({ctx.probe_interval, ctx.authorizer_recheck});
  logic::UserPath path = UserPathOf(server, timing);
  // Through the file: its facts are filled in below. Null: through the
  // authorizers.
  auto* file = std::get_if<logic::ThroughFile>(&path);
  in.subject = api::AllowedSubject(view.subject_prefix());
  in.server = server_key;
  // The installation's effective limits: its status, and what a probe
  // refused at the connection limit names.
  const logic::InstallationLimits limits = logic::InstallationLimitsOf(view, server);
  in.limits = logic::LimitsStatus(limits);
  if (api::OperatorMode(server)) {
    // The key the operator pushes the account under and the authorizer
    // places the engines in: derived from the callout Secret's
    // installation signing seed (absent until the server wrote it).
    kube::ObjectPtr keys = ctx.secrets->Get(server.ns(), server.callout_secret_name());
    if (keys && logic::CheckOwnership(*keys, api::UidOf(server_obj)) == logic::Ownership::kOwned) {
      if (auto data = logic::DecodeSecretData(*keys); data.ok()) {
        auto account = logic::InstallationAccountOf(*data, view.ns(), view.name());
        if (account.ok()) in.account = std::move(account).value();
      }
    }
  }

  // 1. Credentials: the stored state (owned Secret, from the cache) and one
  //    step of the state machine.
  auto read = ReadStoredCredentials(ctx, view, uid);
  if (const auto* f = std::get_if<Finding>(&read)) return Fail(*f);
  const StoredCredentials stored = std::get<StoredCredentials>(std::move(read));
  auto inputs = ReadCredentialInputs(ctx, obj, view, uid);
  if (!inputs.ok()) return inputs.status();
  if (const auto* f = std::get_if<Finding>(&*inputs)) return Fail(*f);
  auto ci = std::get<logic::CredentialInputs>(*inputs);
  // Through the authorizers: they accept both passwords of one user name
  // while a rotation runs, so a rotation changes only the password.
  ci.keep_username = file == nullptr;
  auto plan = logic::PlanCredentials(stored.state, ci);
  if (!plan.ok()) {
    return Fail(Step::kCredentials, reasons::kInvalidSpec, plan.status().message(),
                Action::AwaitChange());
  }
  // Written before anything uses a new password; the cached copy may also
  // need the new layout (an upgrade) even when the state is the same.
  SB_RETURN_IF_ERROR(WriteCredentials(plan->state, stored.marked_conflict, stored.secret.get()));
  // Rotation steps get an event; a first password does not (the Ready event
  // follows, and with 1,000 backends it would be 1,000 more API writes).
  if (!plan->note.empty() && stored.state) {
    Event(false, CredentialEventReason(*stored.state, plan->state), plan->note);
  }
  Passed(Step::kCredentials,
         ci.external_password
             ? "from the Secret in passwordSecretRef"
             : "generated; in Secret " + api::DefaultCredentialsSecretName(view.name()));

  // Operator mode: the env Secret waits until the installation's account
  // is handed to the servers (AccountSyncs::MayHandOut: their lookups
  // answered for it, and it is pushed), so an engine's first connect finds
  // it. The server's reconcile, woken by the credentials Secret, hands it
  // and wakes this backend. An account the server leaves out never comes:
  // that is reported below.
  std::optional<logic::LeftOut> account_left_out;
  if (api::OperatorMode(server)) {
    account_left_out =
        ctx.configs->VerdictOn(ConfigIndex::AccountsKey(server_key), key, plan->probe.username)
            .left_out;
  }
  if (api::OperatorMode(server) && !in.account.empty() && ctx.account_syncs && !account_left_out &&
      !ctx.account_syncs->MayHandOut(server_key, in.account)) {
    ctx.enqueue_server(server_key);
    return Action::RequeueAfter(timing.config_write_wait);
  }

  // 2. The env Secret (while Staged still the previous user: the server may
  //    not have loaded the new one yet).
  auto env_ok = WriteEnv(
      logic::NatsEnv(server.url(), plan->env.username, plan->env.password, view.subject_prefix()));
  if (!env_ok.ok()) return env_ok.status();
  if (*env_ok == stored.marked_conflict) {
    // The render leaves a backend in SecretConflict out: mark or unmark.
    SB_RETURN_IF_ERROR(WriteCredentials(plan->state, !*env_ok, stored.secret.get()));
  }
  if (!*env_ok) return EnvConflict();
  Passed(Step::kEnvSecret, "Secret " + in.env_secret_name + " written");
  in.username = plan->env.username;
  in.rotation = logic::RotationStatus(plan->state);

  auto next_probe = ctx.probe_interval;
  if (plan->requeue_at) next_probe = std::min(next_probe, Until(*plan->requeue_at));
  if (file == nullptr) {
    // Operator mode: the server's reconcile may have left this
    // installation's account out (limits it cannot carry).
    if (account_left_out) {
      return Fail(Step::kRenderConfig, account_left_out->reason, account_left_out->message,
                  Action::AwaitChange());
    }
    // No user goes into a file: the authorizer serves it from the
    // credentials Secret as soon as its cache has it. Probe at once.
    Passed(Step::kRenderConfig, "AuthCallout: authorized by the authorizer from Secret " +
                                    api::DefaultCredentialsSecretName(view.name()) +
                                    "; no config to render");
    return Probe({server, *plan, ci, nullptr, stored.secret.get(), std::move(path),
                  limits.max_connections, next_probe});
  }

  // 3. The user in the server's config Secret (written by the server
  //    reconciler from the same caches).
  SecretCache::RecordPtr config = ctx.secrets->Record(server.ns(), server.config_secret_name());
  const bool staged = plan->state.phase == logic::RotationPhase::kStaged;
  const bool probe_user_in =
      ConfigHolds(ctx, config.get(), server, plan->probe.username, plan->probe.bcrypt);
  bool env_user_in = probe_user_in;
  if (staged && plan->state.previous) {
    env_user_in = ConfigHolds(ctx, config.get(), server, plan->state.previous->username,
                              plan->state.previous->bcrypt);
  }
  logic::InFileFacts in_file;
  in_file.server = server_key;
  in_file.config_secret = server.config_secret_name();
  in_file.probe_user_in = probe_user_in;
  in_file.env_user_in = env_user_in;
  auto verdict = ctx.configs->VerdictOn(server_key, key, plan->probe.username);
  in_file.server_rendered = verdict.rendered;
  in_file.left_out = std::move(verdict.left_out);
  in_file.has_status = StatusOf(obj).contains("conditions");
  in_file.env_user = plan->env.username;
  auto step = logic::DecideInFile(in_file);
  const auto wait = timing.config_write_wait;
  switch (step.step) {
    case logic::InFile::kProceed:
      break;
    case logic::InFile::kLeftOut:
      // The server's next render that changes this verdict wakes it.
      return Fail(Step::kRenderConfig, step.reason, step.message, Action::AwaitChange());
    case logic::InFile::kWait:
      ctx.enqueue_server(server_key);
      return Action::RequeueAfter(wait);
    case logic::InFile::kReport:
      ctx.enqueue_server(server_key);
      return Fail(Step::kRenderConfig, step.reason, step.message, Action::RequeueAfter(wait));
  }
  Passed(Step::kRenderConfig, "in Secret " + server.ns() + "/" + server.config_secret_name() +
                                  " key " + server.config_key());

  file->user_in_config = probe_user_in;
  return Probe({server, *plan, ci, config.get(), stored.secret.get(), std::move(path),
                limits.max_connections, next_probe});
}

}  // namespace switchboard::operator_controller
