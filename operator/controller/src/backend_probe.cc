// The probe step of a PubSubBackend reconcile: a live probe with the user's
// credentials on the ProbePool (off the reconcile workers). A reconcile
// submits a probe and returns; the pool enqueues the backend when it is
// done, and this step then turns the outcome into the Probe step, confirms a
// Staged rotation, and schedules the next probe.
#include "backend_step.h"
#include "config_index.h"
#include "probe_pool.h"
#include "switchboard/operator_logic/backend_policy.h"
#include "switchboard/operator_logic/config_load.h"
#include "switchboard/operator_logic/env.h"
#include "switchboard/operator_logic/time_util.h"

namespace switchboard::operator_controller {
namespace logic = ::switchboard::operator_logic;
namespace reasons = ::switchboard::operator_logic::reasons;
using logic::Step;
using namespace std::chrono_literals;

namespace {

// What a probe must have been taken for to be trusted now.
std::string Fingerprint(const logic::BackendStatusInput& in, const logic::CredentialPlan& plan,
                        const api::NatsServerView& server) {
  return in.env_secret_hash + "|" + plan.probe.username + "|" + plan.probe.bcrypt + "|" +
         std::to_string(in.generation) + "|" + server.url() + "|" +
         std::to_string(server.max_payload().value_or(0));
}

// After a restart the stored status is trusted while it describes this very
// setup and its probe is recent: a restart re-probes nothing and flips
// nothing. Returns the time left until the next probe, nullopt when the
// stored status cannot be trusted.
std::optional<std::chrono::milliseconds> TrustedStoredProbe(const json& st,
                                                            const logic::BackendStatusInput& in,
                                                            std::chrono::milliseconds interval) {
  const auto conditions = logic::ConditionsFromJson(st.value("conditions", json::array()));
  const logic::Condition* ready = logic::FindCondition(conditions, logic::condition_types::kReady);
  auto last = logic::ParseTime(st.value("lastProbeTime", ""));
  if (ready && ready->status == "True" && ready->reason == reasons::kProbed &&
      st.value("observedGeneration", int64_t{-1}) == in.generation &&
      st.value("envSecretHash", "") == in.env_secret_hash &&
      st.value("username", "") == in.username && last.ok() &&
      logic::Clock::now() - *last < interval) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(interval -
                                                                 (logic::Clock::now() - *last));
  }
  return std::nullopt;
}

}  // namespace

Result<Action> BackendReconciler::Impl::Probe(NatsProbe p) {
  const auto& plan = p.plan;
  const std::string url = p.server.url();
  const std::string prefix = view.subject_prefix();
  const bool staged = plan.state.phase == logic::RotationPhase::kStaged;
  const std::string fingerprint = Fingerprint(in, plan, p.server);
  auto next_probe = p.next_probe;

  auto outcome = ctx.probes->Latest(key);
  if (!outcome || outcome->fingerprint != fingerprint) {
    const json st = StatusOf(obj);
    if (auto left = staged ? std::nullopt : TrustedStoredProbe(st, in, ctx.probe_interval)) {
      in.last_probe_time = st.value("lastProbeTime", "");
      if (st.contains("serverMaxPayload") && st["serverMaxPayload"].is_number_integer()) {
        in.server_max_payload = st["serverMaxPayload"].get<int64_t>();
      }
      Passed(Step::kProbe, "probe passed");
      return Report(Action::RequeueAfter(std::min(*left, next_probe)));
    }
    if (!staged) {
      // The reloader may say the server has not loaded the user yet: then
      // the probe would only be refused. Its next report wakes this backend.
      auto facts =
          ctx.configs->LoadFacts(p.config, p.server.config_key(),
                                 ConfigIndex::Entry(plan.probe.username, plan.probe.bcrypt));
      facts.patience = ctx.report_patience;
      if (logic::DecideConfigLoad(facts) == logic::ConfigLoad::kPending) {
        auto recheck = std::max(std::chrono::milliseconds(100ms),
                                std::chrono::duration_cast<std::chrono::milliseconds>(
                                    facts.patience - facts.user_waiting));
        // A new backend waits quietly: its first status is the probe's.
        if (!st.contains("conditions")) return Action::RequeueAfter(recheck);
        return Fail(Step::kProbe, reasons::kConfigNotReloaded,
                    "the server has not loaded the config that carries user " +
                        plan.probe.username + " yet (its reloader reports an earlier one)",
                    Action::RequeueAfter(recheck));
      }
    }
    auto ca = CaFile(ctx, p.server);
    if (!ca.ok()) {
      return Fail(Step::kProbe, reasons::kServerUnreachable, ca.status().message(),
                  Action::RequeueAfter(10s));
    }
    ProbeJob job;
    job.fingerprint = fingerprint;
    job.primary.urls = url;
    job.primary.username = plan.probe.username;
    job.primary.password = plan.probe.password;
    job.primary.subject_prefix = prefix;
    job.primary.ca_file = *ca;
    job.primary.timeout = ctx.probe_timeout;
    if (staged && plan.env.username != plan.probe.username) {
      job.fallback = job.primary;
      job.fallback->username = plan.env.username;
      job.fallback->password = plan.env.password;
    }
    ctx.probes->Submit(key, std::move(job));
    // The pool enqueues this backend when the probe is done; the status
    // changes then, once.
    return Action::AwaitChange();
  }

  const auto age = std::chrono::steady_clock::now() - outcome->at;
  auto resubmit_after = [&](std::chrono::milliseconds d) -> Action {
    if (age >= d) {
      // Stale: take a new one (the old verdict stands meanwhile).
      ctx.probes->Forget(key);
      ctx.enqueue_backend(key);
      return Action::AwaitChange();
    }
    return Action::RequeueAfter(std::chrono::duration_cast<std::chrono::milliseconds>(d - age) +
                                1ms);
  };
  // lastProbeTime moves only with a passing probe: a retry that fails the
  // same way writes nothing.
  if (outcome->primary.ok()) {
    in.last_probe_time = outcome->time;
  } else if (outcome->fallback_ok) {
    // RotationStaged, retried every reload_retry: keep the time, or each
    // retry would be a status write.
    in.last_probe_time = StatusOf(obj).value("lastProbeTime", outcome->time);
  }
  if (outcome->max_payload > 0) in.server_max_payload = outcome->max_payload;

  if (outcome->primary.ok()) {
    if (staged) {
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
      if (confirmed.requeue_at) next_probe = std::min(next_probe, Until(*confirmed.requeue_at));
    }
    Passed(Step::kProbe, "probe passed");
    auto r = Report(Action::RequeueAfter(next_probe));
    if (!r.ok()) return r;
    return staged ? Action::RequeueAfter(next_probe) : resubmit_after(next_probe);
  }
  if (staged && outcome->fallback_ok) {
    in.ready_reason = std::string(reasons::kRotationStaged);
    in.ready_message =
        "probe passed with the env Secret's credentials; the rotation switches "
        "them once the server accepts user " +
        plan.probe.username;
    Passed(Step::kProbe, "the env Secret's credentials work; user " + plan.probe.username +
                             " waits for the server to load the rendered config");
    auto r = Report(Action::AwaitChange());
    if (!r.ok()) return r;
    return resubmit_after(ctx.reload_retry);
  }
  logic::ProbeFailureFacts ff;
  ff.code = outcome->primary.code();
  ff.probe_message = outcome->primary.message();
  ff.user = plan.probe.username;
  ff.server = p.server.key().ToString();
  ff.user_in_config = p.probe_user_in;
  auto load = ctx.configs->LoadFacts(p.config, p.server.config_key(),
                                     ConfigIndex::Entry(plan.probe.username, plan.probe.bcrypt));
  load.patience = ctx.report_patience;
  ff.load = logic::DecideConfigLoad(load);
  ff.user_waiting = load.user_waiting;
  ff.load_window = ctx.reload_window;
  ff.has_status = StatusOf(obj).contains("conditions");
  ff.reload_retry = ctx.reload_retry;
  ff.failure_retry = std::min(ctx.probe_interval, std::chrono::milliseconds(10s));
  auto failure = logic::DecideProbeFailure(ff);
  const auto retry = std::min(failure.retry, next_probe);
  // A new backend waits quietly for the reload: its first status is Ready.
  if (!failure.report) return resubmit_after(retry);
  auto r = Fail(Step::kProbe, failure.reason, failure.message, Action::AwaitChange());
  if (!r.ok()) return r;
  return resubmit_after(retry);
}

}  // namespace switchboard::operator_controller
