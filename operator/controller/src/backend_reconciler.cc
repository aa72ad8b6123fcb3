#include <fstream>
#include <map>
#include <mutex>
#include <optional>

#include "config_index.h"
#include "k8s_util.h"
#include "probe_pool.h"
#include "secret_io.h"
#include "switchboard/api/names.h"
#include "switchboard/api/views.h"
#include "switchboard/common/log.h"
#include "switchboard/operator_controller/reconcilers.h"
#include "switchboard/operator_logic/cluster_render.h"
#include "switchboard/operator_logic/conditions.h"
#include "switchboard/operator_logic/env.h"
#include "switchboard/operator_logic/objects.h"
#include "switchboard/operator_logic/rotation.h"
#include "switchboard/operator_logic/secrets.h"
#include "switchboard/operator_logic/time_util.h"
#include "switchboard/rules/validate.h"

namespace switchboard::operator_controller {
namespace logic = ::switchboard::operator_logic;
namespace reasons = ::switchboard::operator_logic::reasons;
using logic::Step;

namespace {

using namespace std::chrono_literals;
constexpr const char* kLogger = "backend";
// The finalizer the operator wrote before the one core; replaced on sight.
constexpr std::string_view kLegacyFinalizer = "pubsub.switchboard.dev/finalizer";

std::chrono::milliseconds Until(logic::Time t) {
  auto d = std::chrono::duration_cast<std::chrono::milliseconds>(t - logic::Clock::now());
  return d < 100ms ? std::chrono::milliseconds(100ms) : d;
}

// JSON patches whose "test" ops guard the exact list element: safe against
// concurrent writers without a resourceVersion.
Status EnsureFinalizer(const ReconcileContext& ctx, const json& obj) {
  const bool has_new = HasFinalizer(obj, logic::kFinalizer);
  const json& fs = obj["metadata"].value("finalizers", json::array());
  int legacy = -1;
  for (size_t i = 0; i < fs.size(); i++) {
    if (fs[i].is_string() && fs[i].get_ref<const std::string&>() == kLegacyFinalizer) {
      legacy = static_cast<int>(i);
    }
  }
  json patch;
  if (legacy >= 0) {
    const std::string path = "/metadata/finalizers/" + std::to_string(legacy);
    patch = json::array({{{"op", "test"}, {"path", path}, {"value", kLegacyFinalizer}}});
    if (has_new) {
      patch.push_back({{"op", "remove"}, {"path", path}});
    } else {
      patch.push_back({{"op", "replace"}, {"path", path}, {"value", logic::kFinalizer}});
    }
  } else if (has_new) {
    return Status::Ok();
  } else if (obj["metadata"].contains("finalizers") && obj["metadata"]["finalizers"].is_array()) {
    patch = json::array(
        {{{"op", "add"}, {"path", "/metadata/finalizers/-"}, {"value", logic::kFinalizer}}});
  } else {
    patch = json::array({{{"op", "add"},
                          {"path", "/metadata/finalizers"},
                          {"value", json::array({logic::kFinalizer})}}});
  }
  return ctx.client
      ->Patch(kube::resources::PubSubBackend(), api::NamespaceOf(obj), api::NameOf(obj),
              kube::PatchType::kJson, patch)
      .status();
}

Status RemoveFinalizers(const ReconcileContext& ctx, const json& obj) {
  const json& fs = obj["metadata"].value("finalizers", json::array());
  json patch = json::array();
  for (size_t i = fs.size(); i-- > 0;) {
    if (!fs[i].is_string()) continue;
    const std::string& f = fs[i].get_ref<const std::string&>();
    if (f != logic::kFinalizer && f != kLegacyFinalizer) continue;
    const std::string path = "/metadata/finalizers/" + std::to_string(i);
    patch.push_back({{"op", "test"}, {"path", path}, {"value", f}});
    patch.push_back({{"op", "remove"}, {"path", path}});
  }
  if (patch.empty()) return Status::Ok();
  auto r = ctx.client->Patch(kube::resources::PubSubBackend(), api::NamespaceOf(obj),
                             api::NameOf(obj), kube::PatchType::kJson, patch);
  if (!r.ok() && r.status().code() == StatusCode::kNotFound) return Status::Ok();
  return r.status();
}

// The probe's CA file for a server with spec.tls.caSecretRef ("" when none).
Result<std::string> CaFile(const ReconcileContext& ctx, const api::NatsServerView& server) {
  auto ref = server.ca_secret();
  if (!ref) return std::string();
  auto s = GetSecretOrNull(ctx.client, server.ns(), ref->name);
  if (!s.ok()) return s.status();
  logic::SecretData d;
  if (!s->is_null()) {
    auto decoded = logic::DecodeSecretData(*s);
    if (decoded.ok()) d = std::move(decoded).value();
  }
  auto it = d.find(ref->key);
  if (it == d.end()) {
    return Status::NotFound("CA Secret " + server.ns() + "/" + ref->name + " key " + ref->key +
                            " (NatsServer spec.tls.caSecretRef) not found");
  }
  std::string path = ctx.ca_dir + "/" + server.ns() + "_" + server.name() + ".crt";
  std::ofstream(path, std::ios::trunc) << it->second;
  return path;
}

// Reason of a credentials event, from the state before and after a step.
std::string_view CredentialEventReason(const std::optional<logic::CredentialState>& before,
                                       const logic::CredentialState& after) {
  if (!before) return reasons::kCredentialsCreated;
  if (before->phase != after.phase) {
    if (after.phase == logic::RotationPhase::kStaged) return reasons::kRotationStaged;
    if (after.phase == logic::RotationPhase::kRetiring) return reasons::kRotationSwitched;
    return reasons::kRotationCompleted;
  }
  return reasons::kRotationStaged;  // a note without a phase change: an ignored request
}

}  // namespace

struct BackendReconciler::Facts {
  struct Entry {
    std::string version;  // metadata.resourceVersion the facts were read from
    std::string kind, server, prefix, user;
  };
  std::mutex mu;
  std::map<std::string, Entry> by_key;  // guarded by mu

  // The objects the shared rules compare `self` with: only backends on the
  // same server that could clash (same prefix or username, nested
  // prefixes), and the referenced server.
  rules::Context Build(const ReconcileContext& ctx, const api::BackendView& self) {
    rules::Context vc;
    if (self.kind() != "nats") return vc;
    const std::string server = self.server().ToString();
    const std::string prefix = self.subject_prefix();
    const std::string user = self.username();
    const std::string me = self.key().ToString();
    auto nested = [](const std::string& a, const std::string& b) {
      return a.size() > b.size() && a.compare(0, b.size(), b) == 0 && a[b.size()] == '.';
    };
    std::vector<kube::ObjectPtr> all = ctx.backends->List();
    std::lock_guard lock(mu);
    std::map<std::string, Entry> fresh;
    for (const auto& o : all) {
      const std::string key = kube::ObjectKeyOf(*o);
      auto it = by_key.find(key);
      Entry e;
      const auto& meta = (*o)["metadata"];
      auto rv = meta.find("resourceVersion");
      const std::string* version =
          rv != meta.end() && rv->is_string() ? &rv->get_ref<const std::string&>() : nullptr;
      if (it != by_key.end() && version && it->second.version == *version) {
        e = std::move(it->second);
      } else {
        api::BackendView v(*o);
        e = {version ? *version : "", v.kind(), v.server().ToString(), v.subject_prefix(),
             v.username()};
      }
      if (e.kind == "nats" && e.server == server && key != me &&
          (e.prefix == prefix || e.user == user || nested(e.prefix, prefix) ||
           nested(prefix, e.prefix))) {
        vc.backends.push_back(*o);
      }
      fresh.emplace(key, std::move(e));
    }
    by_key = std::move(fresh);
    const api::ObjectKey sk = self.server();
    if (auto s = ctx.servers->Get(sk.ns, sk.name)) vc.servers.push_back(*s);
    return vc;
  }
};

BackendReconciler::BackendReconciler(ReconcileContext ctx)
    : ctx_(std::move(ctx)), facts_(std::make_unique<Facts>()) {}
BackendReconciler::~BackendReconciler() = default;

struct BackendReconciler::Impl {
  const ReconcileContext& ctx;
  const json& obj;
  api::BackendView view;
  std::string key;
  std::string uid;
  logic::BackendStatusInput in;

  Impl(const ReconcileContext& c, const json& o)
      : ctx(c), obj(o), view(o), key(view.key().ToString()), uid(UidOf(o)) {
    in.generation = GenerationOf(o);
    auto kind = logic::ParseBackendKind(view.kind());
    in.kind = kind.ok() ? *kind : logic::BackendKind::kNats;
  }

  void Event(bool warning, std::string_view reason, const std::string& message) {
    if (ctx.recorder) {
      ctx.recorder->Record(obj, warning ? kube::EventType::kWarning : kube::EventType::kNormal,
                           std::string(reason), message);
    }
  }

  // Status (and its event) from the steps so far; written only on change.
  Result<Action> Report(Action action) {
    const json previous = StatusOf(obj);
    json status = logic::ComputeBackendStatus(previous, in, logic::FormatTime(logic::Clock::now()));
    if (status == previous) return action;
    if (auto ev = logic::ReadyTransitionEvent(previous, status)) {
      Event(ev->warning, ev->reason, ev->message);
    }
    kube::PatchOptions po;
    po.subresource = "status";
    json patch = {{"status", status}};
    // Merge patch: fields we no longer report are removed explicitly.
    for (auto it = previous.begin(); it != previous.end(); ++it) {
      if (!status.contains(it.key())) patch["status"][it.key()] = nullptr;
    }
    auto r = ctx.client->Patch(kube::resources::PubSubBackend(), view.ns(), view.name(),
                               kube::PatchType::kMerge, patch, po);
    if (!r.ok() && r.status().code() != StatusCode::kNotFound) return r.status();
    return action;
  }

  Result<Action> Fail(Step step, std::string_view reason, const std::string& message,
                      Action action) {
    in.steps.push_back({step, false, std::string(reason), message});
    return Report(action);
  }

  void Passed(Step step, std::string message) {
    in.steps.push_back({step, true, "", std::move(message)});
  }

  // Env Secret with `env`; SecretConflict when its name is taken.
  Result<bool> WriteEnv(const logic::SecretData& env) {
    const std::string name = view.env_secret_name();
    kube::ObjectPtr cached = ctx.secrets->Get(view.ns(), name);
    json desired = logic::EnvSecret({view.ns(), view.name(), uid}, name, env);
    auto w = WriteOwnedSecret(ctx.client, desired, cached.get(), uid, ctx.recent);
    if (!w.ok()) {
      if (w.status().code() == StatusCode::kFailedPrecondition) return false;
      return w.status();
    }
    in.env_secret_name = name;
    in.env_secret_hash = logic::EnvHash(env);
    return true;
  }

  Result<Action> EnvConflict() {
    const std::string name = view.env_secret_name();
    return Fail(Step::kEnvSecret, reasons::kSecretConflict,
                logic::ForeignSecretMessage(view.ns(), name) +
                    "; or choose another name (spec.output.secretName)",
                Action::AwaitChange());
  }

  Result<Action> Invalid(const rules::Report& report) {
    std::string msg;
    for (const auto& f : report.errors) msg += (msg.empty() ? "" : "; ") + f.ToString();
    auto r = Fail(Step::kValidate, reasons::kInvalidSpec, msg, Action::Terminal());
    if (!r.ok()) return r.status();
    return Action::Terminal();
  }

  Result<Action> Rabbit() {
    auto ref = view.rabbitmq_url_secret();
    if (!ref) return Invalid({{{"spec.rabbitmq.urlSecretRef", "is required"}}});
    auto s = GetSecretOrNull(ctx.client, view.ns(), ref->name);
    if (!s.ok()) return s.status();
    logic::SecretData d;
    if (!s->is_null()) {
      auto decoded = logic::DecodeSecretData(*s);
      if (decoded.ok()) d = std::move(decoded).value();
    }
    auto url = d.find(ref->key);
    const std::string where = "Secret " + view.ns() + "/" + ref->name + " key \"" + ref->key + "\"";
    if (url == d.end() || url->second.empty()) {
      return Fail(
          Step::kCredentials, reasons::kCredentialsNotFound,
          where + " (spec.rabbitmq.urlSecretRef) not found; create it with the amqp(s):// URL",
          Action::AwaitChange());
    }
    // The rules cannot see Secret contents; the URL is never echoed (it may
    // hold a password).
    if (url->second.rfind("amqp://", 0) != 0 && url->second.rfind("amqps://", 0) != 0) {
      return Fail(Step::kCredentials, reasons::kInvalidSpec,
                  where + " is not an amqp:// or amqps:// URL", Action::AwaitChange());
    }
    Passed(Step::kCredentials, "RabbitMQ URL found");
    auto w = WriteEnv(logic::RabbitMqEnv(url->second, view.max_pub_chans(), view.max_sub_chans()));
    if (!w.ok()) return w.status();
    if (!*w) return EnvConflict();
    Passed(Step::kEnvSecret, "Secret " + in.env_secret_name + " written");
    return Report(Action::AwaitChange());
  }

  Result<Action> Postgres() {
    auto w = WriteEnv(logic::PostgresEnv(view.max_conns(), view.min_conns()));
    if (!w.ok()) return w.status();
    if (!*w) return EnvConflict();
    Passed(Step::kEnvSecret, "Secret " + in.env_secret_name + " written");
    return Report(Action::AwaitChange());
  }

  Result<Action> Nats(const json& server_obj);
  Result<Action> Finalize();
};

Result<Action> BackendReconciler::Impl::Nats(const json& server_obj) {
  api::NatsServerView server(server_obj);
  const std::string server_key = server.key().ToString();
  const logic::OwnerObject owner{view.ns(), view.name(), uid};
  in.subject = view.subject_prefix() + ".*";
  in.server = server_key;

  // 1. Credentials: the stored state (owned Secret, from the cache) and one
  //    step of the state machine.
  const std::string creds_name = api::DefaultCredentialsSecretName(view.name());
  kube::ObjectPtr creds_secret = ctx.secrets->Get(view.ns(), creds_name);
  std::optional<logic::CredentialState> stored;
  bool marked_conflict = false;
  if (creds_secret) {
    if (logic::CheckOwnership(*creds_secret, uid) != logic::Ownership::kOwned) {
      return Fail(Step::kCredentials, reasons::kSecretConflict,
                  logic::ForeignSecretMessage(view.ns(), creds_name), Action::AwaitChange());
    }
    marked_conflict = !Annotation(*creds_secret, logic::kSecretConflictAnnotation).empty();
    auto data = logic::DecodeSecretData(*creds_secret);
    if (!data.ok())
      return Fail(Step::kCredentials, reasons::kCredentialsNotFound, data.status().message(),
                  Action::AwaitChange());
    auto state = logic::DecodeState(*data);
    if (!state.ok())
      return Fail(Step::kCredentials, reasons::kCredentialsNotFound, state.status().message(),
                  Action::AwaitChange());
    stored = std::move(state).value();
  }
  logic::CredentialInputs ci;
  ci.username = view.username();
  ci.rotate_token = Annotation(obj, logic::kRotateAnnotation);
  ci.ack_token = Annotation(obj, logic::kRotationAckAnnotation);
  auto grace = logic::ParseDuration(view.rotation_grace_period(),
                                    "spec.nats.credentials.rotationGracePeriod");
  if (!grace.ok()) return Invalid({{{"", grace.status().message()}}});
  ci.grace_period = *grace;
  ci.now = logic::Clock::now();
  if (auto ref = view.password_secret()) {
    // The user's own Secret: read by name (it is not ours, so not cached).
    auto s = GetSecretOrNull(ctx.client, view.ns(), ref->name);
    if (!s.ok()) return s.status();
    std::optional<std::string> pw;
    if (!s->is_null()) {
      auto d = logic::DecodeSecretData(*s);
      if (d.ok() && d->count(ref->key) && !d->at(ref->key).empty()) pw = d->at(ref->key);
    }
    if (!pw) {
      return Fail(Step::kCredentials, reasons::kCredentialsNotFound,
                  "Secret " + view.ns() + "/" + ref->name + " key \"" + ref->key +
                      "\" (spec.nats.credentials.passwordSecretRef) not found; create it with "
                      "the password",
                  Action::AwaitChange());
    }
    ci.external_password = std::move(pw);
  }
  kube::ObjectPtr env_secret = ctx.secrets->Get(view.ns(), view.env_secret_name());
  if (env_secret && logic::CheckOwnership(*env_secret, uid) == logic::Ownership::kOwned) {
    auto d = logic::DecodeSecretData(*env_secret);
    if (d.ok()) {
      auto it = d->find(std::string(logic::kEnvNatsUsername));
      if (it != d->end()) ci.env_username = it->second;
    }
  }
  auto plan = logic::PlanCredentials(stored, ci);
  if (!plan.ok()) {
    return Fail(Step::kCredentials, reasons::kInvalidSpec, plan.status().message(),
                Action::AwaitChange());
  }
  auto write_credentials = [&](const logic::CredentialState& state, bool conflict) -> Status {
    json desired = logic::CredentialsSecret(owner, state);
    if (conflict) {
      desired["metadata"]["annotations"][std::string(logic::kSecretConflictAnnotation)] =
          view.env_secret_name();
    }
    auto w = WriteOwnedSecret(ctx.client, desired, creds_secret.get(), uid, ctx.recent);
    return w.status();
  };
  // Written before anything uses a new password; the cached copy may also
  // need the new layout (an upgrade) even when the state is the same.
  SB_RETURN_IF_ERROR(write_credentials(plan->state, marked_conflict));
  // Rotation steps get an event; a first password does not (the Ready event
  // follows, and with 1,000 backends it would be 1,000 more API writes).
  if (!plan->note.empty() && stored) {
    Event(false, CredentialEventReason(stored, plan->state), plan->note);
  }
  Passed(Step::kCredentials, ci.external_password ? "from the Secret in passwordSecretRef"
                                                  : "generated; in Secret " + creds_name);

  // 2. The env Secret (while Staged still the previous user: the server may
  //    not have loaded the new one yet).
  const std::string url = server.url();
  const std::string prefix = view.subject_prefix();
  auto env_ok = WriteEnv(logic::NatsEnv(url, plan->env.username, plan->env.password, prefix));
  if (!env_ok.ok()) return env_ok.status();
  if (*env_ok == marked_conflict) {
    // The render leaves a backend in SecretConflict out: mark or unmark.
    SB_RETURN_IF_ERROR(write_credentials(plan->state, !*env_ok));
  }
  if (!*env_ok) return EnvConflict();
  Passed(Step::kEnvSecret, "Secret " + in.env_secret_name + " written");
  in.username = plan->env.username;
  in.rotation = logic::RotationStatus(plan->state);

  // 3. The user in the server's config Secret (written by the server
  //    reconciler from the same caches).
  kube::ObjectPtr config = ctx.secrets->Get(server.ns(), server.config_secret_name());
  auto users = ctx.configs->Get(config.get(), server.config_key());
  const bool staged = plan->state.phase == logic::RotationPhase::kStaged;
  const bool probe_user_in =
      users->count(ConfigIndex::Entry(plan->probe.username, plan->probe.bcrypt)) > 0;
  bool env_user_in = probe_user_in;
  if (staged && plan->state.previous) {
    env_user_in = users->count(ConfigIndex::Entry(plan->state.previous->username,
                                                  plan->state.previous->bcrypt)) > 0;
  }
  if (!probe_user_in && !env_user_in) {
    ctx.enqueue_server(server_key);
    // A new backend waits quietly: its first status is the probe's.
    if (!StatusOf(obj).contains("conditions")) return Action::RequeueAfter(2s);
    return Fail(Step::kRenderConfig, reasons::kConfigNotReloaded,
                "the user is not yet in NatsServer " + server_key + "'s config Secret " +
                    server.config_secret_name(),
                Action::RequeueAfter(2s));
  }
  Passed(Step::kRenderConfig, "in Secret " + server.ns() + "/" + server.config_secret_name() +
                                  " key " + server.config_key());

  // 4. The probe, on the pool: trust a result taken for exactly this setup.
  const std::string fingerprint = in.env_secret_hash + "|" + plan->probe.username + "|" +
                                  plan->probe.bcrypt + "|" + std::to_string(in.generation) + "|" +
                                  url + "|" + std::to_string(server.max_payload().value_or(0));
  auto next_probe = ctx.probe_interval;
  if (plan->requeue_at) next_probe = std::min(next_probe, Until(*plan->requeue_at));

  auto outcome = ctx.probes->Latest(key);
  if (!outcome || outcome->fingerprint != fingerprint) {
    // After a restart the stored status is trusted while it describes this
    // very setup and its probe is recent: a restart re-probes nothing and
    // flips nothing.
    const json st = StatusOf(obj);
    const auto conditions = logic::ConditionsFromJson(st.value("conditions", json::array()));
    const logic::Condition* ready =
        logic::FindCondition(conditions, logic::condition_types::kReady);
    auto last = logic::ParseTime(st.value("lastProbeTime", ""));
    if (ready && ready->status == "True" && ready->reason == reasons::kProbed && !staged &&
        st.value("observedGeneration", int64_t{-1}) == in.generation &&
        st.value("envSecretHash", "") == in.env_secret_hash &&
        st.value("username", "") == in.username && last.ok() &&
        logic::Clock::now() - *last < ctx.probe_interval) {
      in.last_probe_time = st.value("lastProbeTime", "");
      if (st.contains("serverMaxPayload") && st["serverMaxPayload"].is_number_integer()) {
        in.server_max_payload = st["serverMaxPayload"].get<int64_t>();
      }
      Passed(Step::kProbe, "probe passed");
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          ctx.probe_interval - (logic::Clock::now() - *last));
      return Report(Action::RequeueAfter(std::min(left, next_probe)));
    }
    auto ca = CaFile(ctx, server);
    if (!ca.ok()) {
      return Fail(Step::kProbe, reasons::kServerUnreachable, ca.status().message(),
                  Action::RequeueAfter(10s));
    }
    ProbeJob job;
    job.fingerprint = fingerprint;
    job.primary.urls = url;
    job.primary.username = plan->probe.username;
    job.primary.password = plan->probe.password;
    job.primary.subject_prefix = prefix;
    job.primary.ca_file = *ca;
    job.primary.timeout = ctx.probe_timeout;
    if (staged && plan->env.username != plan->probe.username) {
      job.fallback = job.primary;
      job.fallback->username = plan->env.username;
      job.fallback->password = plan->env.password;
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
      auto confirmed = logic::ConfirmStaged(*plan, logic::Clock::now(), ci.grace_period);
      SB_RETURN_IF_ERROR(write_credentials(confirmed.state, false));
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
        plan->probe.username;
    Passed(Step::kProbe, "the env Secret's credentials work; user " + plan->probe.username +
                             " waits for the server to load the rendered config");
    auto r = Report(Action::AwaitChange());
    if (!r.ok()) return r;
    return resubmit_after(ctx.reload_retry);
  }
  const bool reload_expected =
      staged || !probe_user_in ||
      std::chrono::steady_clock::now() - ctx.configs->SeenAt(config.get()) < ctx.reload_window;
  const auto reason = logic::ProbeFailureReason(outcome->primary.code(), reload_expected);
  std::string message = outcome->primary.message();
  if (reason == reasons::kConfigNotReloaded) {
    message = "the server has not loaded the rendered config yet (" + message + ")";
  }
  auto retry = reason == reasons::kConfigNotReloaded
                   ? ctx.reload_retry
                   : std::min(ctx.probe_interval, std::chrono::milliseconds(10s));
  retry = std::min(retry, next_probe);
  if (reason == reasons::kConfigNotReloaded && !StatusOf(obj).contains("conditions")) {
    // A new backend waits quietly for the reload: its first status is Ready.
    return resubmit_after(retry);
  }
  auto r = Fail(Step::kProbe, reason, message, Action::AwaitChange());
  if (!r.ok()) return r;
  return resubmit_after(retry);
}

Result<Action> BackendReconciler::Impl::Finalize() {
  if (!HasFinalizer(obj, logic::kFinalizer) && !HasFinalizer(obj, kLegacyFinalizer)) {
    return Action::AwaitChange();
  }
  std::string_view skipped;  // why cleanup was skipped (event), empty when done
  std::string server_key;
  if (view.kind() == "nats" && !view.server().name.empty()) {
    server_key = view.server().ToString();
    kube::ObjectPtr server_obj = ctx.servers->Get(view.server().ns, view.server().name);
    if (!server_obj) {
      skipped = reasons::kServerGone;
    } else {
      api::NatsServerView server(*server_obj);
      kube::ObjectPtr config = ctx.secrets->Get(server.ns(), server.config_secret_name());
      if (!config) {
        skipped = reasons::kConfigTargetMissing;
      } else {
        // The render leaves deleting backends out; wait until the config
        // Secret no longer holds this backend's users.
        bool present = false;
        kube::ObjectPtr creds =
            ctx.secrets->Get(view.ns(), api::DefaultCredentialsSecretName(view.name()));
        if (creds && logic::CheckOwnership(*creds, uid) == logic::Ownership::kOwned) {
          auto data = logic::DecodeSecretData(*creds);
          auto state =
              data.ok() ? logic::DecodeState(*data) : Result<logic::CredentialState>(data.status());
          if (state.ok()) {
            auto users = ctx.configs->Get(config.get(), server.config_key());
            for (const auto& u : logic::RenderedUsers(*state)) {
              if (users->count(ConfigIndex::Entry(u.username, u.bcrypt))) present = true;
            }
          }
        }
        if (present) {
          ctx.enqueue_server(server_key);
          auto since = logic::ParseTime(obj["metadata"].value("deletionTimestamp", ""));
          if (!since.ok() || logic::Clock::now() - *since < ctx.cleanup_timeout) {
            return Action::RequeueAfter(500ms);
          }
          skipped = reasons::kCleanupTimedOut;
        }
      }
    }
  }
  kube::ObjectPtr env = ctx.secrets->Get(view.ns(), view.env_secret_name());
  SB_RETURN_IF_ERROR(DeleteOwnedSecret(ctx.client, env.get(), uid));
  if (view.kind() == "nats") {
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
  SB_RETURN_IF_ERROR(RemoveFinalizers(ctx, obj));
  ctx.probes->Forget(key);
  log::Info(kLogger, "finalized", {{"key", key}, {"skipped", std::string(skipped)}});
  return Action::AwaitChange();
}

Result<Action> BackendReconciler::Reconcile(const std::string& key) {
  kube::ObjectPtr ptr = ctx_.backends->Get(key);
  if (!ptr) {
    ctx_.probes->Forget(key);
    return Action::AwaitChange();
  }
  const json& obj = *ptr;
  Impl impl(ctx_, obj);
  if (IsDeleting(obj)) return impl.Finalize();
  SB_RETURN_IF_ERROR(EnsureFinalizer(ctx_, obj));

  // Resolution first: a missing server or a namespace it does not admit has
  // its own reason (the shared rules would call both InvalidSpec).
  kube::ObjectPtr server;
  if (impl.view.kind() == "nats" && !impl.view.server().name.empty()) {
    const api::ObjectKey sk = impl.view.server();
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
  rules::Report report =
      rules::Validate(obj, facts_->Build(ctx_, impl.view), rules::Operation::kCreate);
  if (!report.ok()) return impl.Invalid(report);
  impl.Passed(Step::kValidate, "");
  if (server) impl.Passed(Step::kResolveServer, "");

  const std::string kind = impl.view.kind();
  if (kind == "nats" && server) return impl.Nats(*server);
  if (kind == "rabbitmq") return impl.Rabbit();
  if (kind == "postgres") return impl.Postgres();
  return impl.Invalid({{{"spec.kind", "must be nats, rabbitmq or postgres"}}});
}

}  // namespace switchboard::operator_controller
