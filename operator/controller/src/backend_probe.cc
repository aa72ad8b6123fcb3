// The probe step of a PubSubBackend reconcile: a live probe with the user's
// credentials on the ProbePool (off the reconcile workers). A reconcile
// submits a probe and returns; the pool enqueues the backend when it is
// done. The policy (trust a stored Ready, wait for a reload, probe, what an
// outcome means, when to probe again) is operator_logic::DecideProbe; this
// step reads its facts, calls it, applies (the probe, a Staged rotation's
// confirmation) and reports.
#include <algorithm>

#include "backend_step.h"
#include "config_index.h"
#include "credential_sightings.h"
#include "probe_pool.h"
#include "switchboard/operator_logic/backend_policy.h"
#include "switchboard/operator_logic/config_load.h"
#include "switchboard/operator_logic/env.h"
#include "switchboard/operator_logic/retry_timing.h"
#include "switchboard/operator_logic/time_util.h"
#include "switchboard/pubsub/connection_limit.h"

namespace switchboard::operator_controller {
namespace logic = ::switchboard::operator_logic;
namespace reasons = ::switchboard::operator_logic::reasons;
using logic::Step;

namespace {

// What a probe must have been taken for to be trusted now.
std::string Fingerprint(const logic::BackendStatusInput& in, const logic::CredentialPlan& plan,
                        const api::NatsServerView& server) {
  return in.env_secret_hash + "|" + plan.probe.username + "|" + plan.probe.bcrypt + "|" +
         std::to_string(in.generation) + "|" + server.url() + "|" +
         std::to_string(server.max_payload().value_or(0));
}

}  // namespace

Result<Action> BackendReconciler::Impl::Probe(NatsProbe p) {
  const auto& plan = p.plan;
  const std::string url = p.server.url();
  const std::string prefix = view.subject_prefix();
  const std::string fingerprint = Fingerprint(in, plan, p.server);
  const json st = StatusOf(obj);

  // Read: the facts the probe policy decides on.
  const logic::RetryTiming timing =
      logic::RetryTimingFor({ctx.probe_interval, ctx.authorizer_recheck});
  // What a refusal is judged on, here and in the pool's retries (the code,
  // message and the user's wait at the refusal come from the probe).
  logic::ProbeFailureFacts failure;
  failure.user = plan.probe.username;
  failure.server = p.server.key().ToString();
  failure.path = std::move(p.path);
  failure.has_status = st.is_object() && st.contains("conditions");
  // What the installation's account carries, for a probe refused at its
  // connection limit.
  failure.max_connections = p.max_connections;
  failure.reload_retry = timing.reload_retry;
  failure.failure_retry = timing.failure_retry;
  // How long the user has waited to be served, as its path counts it.
  // Through the authorizers the wait that counts is the one at the
  // refusal, not now: a reconcile that runs late must not turn a refusal
  // inside the window into one after it.
  bool waiting_at_refusal = false;
  if (auto* file = std::get_if<logic::ThroughFile>(&failure.path)) {
    logic::ConfigLoadFacts load =
        ctx.configs->LoadFacts(p.config, p.server.config_key(),
                               ConfigIndex::Entry(plan.probe.username, plan.probe.bcrypt));
    load.patience = ctx.report_patience;
    failure.user_waiting = load.user_waiting;
    file->load = logic::DecideConfigLoad(load);
    file->load_window = ctx.reload_window;
    file->load_patience_left =
        std::chrono::duration_cast<std::chrono::milliseconds>(load.patience - load.user_waiting);
  } else {
    // No file: a refusal waits only for the authorizers' caches to see the
    // credentials Secret this password came from.
    failure.user_waiting = ctx.credential_sightings->Since(key, plan.probe.bcrypt);
    waiting_at_refusal = true;
  }
  logic::ProbeFacts f;
  f.staged = plan.state.phase == logic::RotationPhase::kStaged;
  f.fallback = f.staged && plan.env.username != plan.probe.username;
  f.generation = in.generation;
  f.env_secret_hash = in.env_secret_hash;
  f.username = in.username;
  f.stored_status = st;
  f.now = logic::Clock::now();
  f.interval = ctx.probe_interval;
  f.next_probe = p.next_probe;
  f.failure = failure;
  auto outcome = ctx.probes->Latest(key);
  if (outcome && outcome->fingerprint == fingerprint) {
    logic::ProbeFacts::Outcome o;
    o.primary_ok = outcome->primary.ok();
    o.fallback_ok = outcome->fallback_ok;
    o.age = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  outcome->at);
    o.code = outcome->primary.code();
    o.message = outcome->primary.message();
    o.server_connection_limit =
        pubsub::ConnectionLimitOf(outcome->primary) == pubsub::ConnectionLimit::kServer;
    o.user_waiting = waiting_at_refusal
                         ? std::max(std::chrono::milliseconds(0), failure.user_waiting - o.age)
                         : failure.user_waiting;
    f.outcome = o;
  } else {
    outcome.reset();
  }

  // Decide.
  const logic::ProbeStep step = logic::DecideProbe(f);
  auto then = [&]() -> Action {
    switch (step.then) {
      case logic::ProbeThen::kRequeue:
        return Action::RequeueAfter(step.after);
      case logic::ProbeThen::kProbeAgain:
        // Stale: take a new one (the old verdict stands meanwhile).
        ctx.probes->Forget(key);
        ctx.enqueue_backend(key);
        return Action::AwaitChange();
      case logic::ProbeThen::kAwait:
        break;
    }
    return Action::AwaitChange();
  };
  auto report = [&]() -> Result<Action> {
    auto r = Report(Action::AwaitChange());
    if (!r.ok()) return r;
    return then();
  };
  if (outcome && outcome->primary.ok()) in.last_probe_time = outcome->time;
  if (outcome && outcome->max_payload > 0) in.server_max_payload = outcome->max_payload;

  // Apply and report.
  switch (step.action) {
    case logic::ProbeAction::kTrustStored:
      in.last_probe_time = st.value("lastProbeTime", "");
      if (st.contains("serverMaxPayload") && st["serverMaxPayload"].is_number_integer()) {
        in.server_max_payload = st["serverMaxPayload"].get<int64_t>();
      }
      Passed(Step::kProbe, "probe passed");
      return report();
    case logic::ProbeAction::kWaitForLoad:
      // The reloader's next report wakes this backend.
      if (!step.report) return then();
      return Fail(Step::kProbe, step.reason, step.message, then());
    case logic::ProbeAction::kSubmit: {
      auto ca = CaFile(ctx, p.server);
      if (!ca.ok()) {
        return Fail(Step::kProbe, reasons::kCaSecretUnusable, ca.status().message(),
                    Action::RequeueAfter(timing.backend_ca_retry));
      }
      ProbeJob job;
      job.fingerprint = fingerprint;
      job.primary.urls = url;
      job.primary.username = plan.probe.username;
      job.primary.password = plan.probe.password;
      job.primary.subject_prefix = prefix;
      job.primary.ca_file = *ca;
      job.primary.timeout = ctx.probe_timeout;
      if (f.fallback) {
        job.fallback = job.primary;
        job.fallback->username = plan.env.username;
        job.fallback->password = plan.env.password;
      }
      // The pool probes a refusal again itself while the authorizers may
      // still be catching up (DecideProbeRetry; never through the file),
      // so this backend comes back through the work queue once, with the
      // final outcome.
      job.retry = std::move(failure);
      job.credentials_since = std::chrono::steady_clock::now() - job.retry->user_waiting;
      ctx.probes->Submit(key, std::move(job));
      // The pool enqueues this backend when the probe is done; the status
      // changes then, once.
      return Action::AwaitChange();
    }
    case logic::ProbeAction::kConfirm: {
      // The server accepts the new user: engines may now be handed it.
      auto confirmed = logic::ConfirmStaged(plan, logic::Clock::now(), p.ci.grace_period);
      SB_RETURN_IF_ERROR(WriteCredentials(confirmed.state, false, p.creds_secret));
      Event(false, reasons::kRotationSwitched, confirmed.note);
      auto w =
          WriteEnv(logic::NatsEnv(url, confirmed.env.username, confirmed.env.password, prefix));
      if (!w.ok()) return w.status();
      if (!*w) return EnvConflict();
      in.username = confirmed.env.username;
      in.rotation = logic::RotationStatus(confirmed.state);
      auto next = step.after;
      if (confirmed.requeue_at) next = std::min(next, Until(*confirmed.requeue_at));
      Passed(Step::kProbe, "probe passed");
      return Report(Action::RequeueAfter(next));
    }
    case logic::ProbeAction::kPassed:
      Passed(Step::kProbe, "probe passed");
      return report();
    case logic::ProbeAction::kRotationStaged:
      // Retried every reload_retry: keep the stored time, or each retry
      // would be a status write.
      in.last_probe_time = st.value("lastProbeTime", outcome->time);
      in.ready_reason = step.reason;
      in.ready_message = step.message;
      Passed(Step::kProbe, "the env Secret's credentials work; user " + plan.probe.username +
                               " waits for the server to load the rendered config");
      return report();
    case logic::ProbeAction::kFailed: {
      // A new backend waits quietly for the reload: its first status is Ready.
      if (!step.report) return then();
      auto r = Fail(Step::kProbe, step.reason, step.message, Action::AwaitChange());
      if (!r.ok()) return r;
      return then();
    }
  }
  return Action::AwaitChange();
}

}  // namespace switchboard::operator_controller
