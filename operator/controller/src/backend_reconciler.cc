#include <fstream>
#include <optional>

#include "backend_spec.h"
#include "credentials.h"
#include "desired.h"
#include "k8s_util.h"
#include "secrets.h"
#include "switchboard/common/log.h"
#include "switchboard/controller/reconcilers.h"
#include "switchboard/pubsub/probe.h"
#include "switchboard/validation/validate.h"

namespace switchboard::controller {
namespace {

using namespace std::chrono_literals;
constexpr const char* kLogger = "backend";

// The status being built for one reconcile: starts from the stored one so
// unchanged conditions keep their lastTransitionTime.
struct StatusBuilder {
  json status;
  int64_t generation;

  StatusBuilder(const json& obj, int64_t gen) : generation(gen) {
    status = obj.contains("status") && obj["status"].is_object() ? obj["status"] : json::object();
    status["observedGeneration"] = gen;
    if (!status.contains("conditions")) status["conditions"] = json::array();
  }
  void Set(std::string_view type, bool ok, std::string_view reason, std::string_view msg) {
    SetCondition(&status["conditions"], Condition(type, ok, reason, msg, generation));
  }
  void Ready(bool ok, std::string_view reason, std::string_view msg) {
    Set("Ready", ok, reason, msg);
  }
};

// Writes status when it differs from the stored one (merge patch on the
// status subresource: no resourceVersion race with spec edits).
Status WriteStatus(const ReconcileContext& ctx, const json& obj, const json& status) {
  if (obj.contains("status") && obj["status"] == status) return Status::Ok();
  kube::PatchOptions po;
  po.subresource = "status";
  json patch = {{"status", status}};
  // Conditions are replaced as a whole; merge patch would otherwise keep
  // fields we removed (e.g. rotation) only if we null them explicitly.
  for (const char* k : {"rotation", "serverMaxPayload", "lastProbeTime"}) {
    if (obj.contains("status") && obj["status"].contains(k) && !status.contains(k)) {
      patch["status"][k] = nullptr;
    }
  }
  auto r = ctx.client->Patch(kube::resources::PubSubBackend(), kube::NamespaceOf(obj),
                             kube::NameOf(obj), kube::PatchType::kMerge, patch, po);
  if (!r.ok() && r.status().code() == StatusCode::kNotFound) return Status::Ok();
  return r.status();
}

void Event(const ReconcileContext& ctx, const json& obj, bool warning, const std::string& reason,
           const std::string& message) {
  if (ctx.recorder) {
    ctx.recorder->Record(obj, warning ? kube::EventType::kWarning : kube::EventType::kNormal,
                         reason, message);
  }
}

// Records an event when the Ready reason changes (not on every retry).
void EventOnTransition(const ReconcileContext& ctx, const json& obj, const StatusBuilder& sb) {
  const json* now = nullptr;
  for (const auto& c : sb.status["conditions"]) {
    if (c.value("type", "") == "Ready") now = &c;
  }
  if (!now) return;
  const std::string reason = now->value("reason", "");
  const json* before = FindCondition(obj, "Ready");
  if (before && before->value("reason", "") == reason &&
      before->value("observedGeneration", int64_t{-1}) == sb.generation) {
    return;
  }
  Event(ctx, obj, now->value("status", "") != "True", reason, now->value("message", ""));
}

// Finalizers are changed with JSON patches whose "test" op guards the
// exact element: safe against concurrent writers without a resourceVersion
// (a status write of ours would otherwise make every attempt a conflict).
Status AddFinalizer(const ReconcileContext& ctx, const json& obj) {
  json patch;
  if (obj["metadata"].contains("finalizers") && obj["metadata"]["finalizers"].is_array()) {
    patch =
        json::array({{{"op", "add"}, {"path", "/metadata/finalizers/-"}, {"value", kFinalizer}}});
  } else {
    patch = json::array(
        {{{"op", "add"}, {"path", "/metadata/finalizers"}, {"value", json::array({kFinalizer})}}});
  }
  return ctx.client
      ->Patch(kube::resources::PubSubBackend(), kube::NamespaceOf(obj), kube::NameOf(obj),
              kube::PatchType::kJson, patch)
      .status();
}

Status RemoveFinalizer(const ReconcileContext& ctx, const json& obj) {
  const json& fs = obj["metadata"].value("finalizers", json::array());
  for (size_t i = 0; i < fs.size(); i++) {
    if (!(fs[i].is_string() && fs[i].get<std::string>() == kFinalizer)) continue;
    const std::string path = "/metadata/finalizers/" + std::to_string(i);
    json patch = json::array({{{"op", "test"}, {"path", path}, {"value", kFinalizer}},
                              {{"op", "remove"}, {"path", path}}});
    auto r = ctx.client->Patch(kube::resources::PubSubBackend(), kube::NamespaceOf(obj),
                               kube::NameOf(obj), kube::PatchType::kJson, patch);
    if (!r.ok() && r.status().code() == StatusCode::kNotFound) return Status::Ok();
    // A failed "test" (the list moved) comes back as an error: retried with
    // the fresh object.
    return r.status();
  }
  return Status::Ok();
}

// The objects the shared rules compare this backend with: only backends on
// the same server that could clash (same prefix or username, or nested
// prefixes), and the referenced server. Building the full lists would make
// every reconcile O(all backends) in copies.
validation::Context BuildContext(const ReconcileContext& ctx, const BackendSpec& spec) {
  validation::Context vc;
  if (spec.kind != "nats") return vc;
  for (const auto& o : ctx.backends->List()) {
    if (ServerKeyOf(*o) != spec.server_key()) continue;
    BackendSpec other = ReadBackendSpec(*o);
    if (other.key() == spec.key()) continue;
    auto nested = [](const std::string& a, const std::string& b) {
      return a.size() > b.size() && a.compare(0, b.size(), b) == 0 && a[b.size()] == '.';
    };
    if (other.prefix == spec.prefix || other.username == spec.username ||
        nested(other.prefix, spec.prefix) || nested(spec.prefix, other.prefix)) {
      vc.backends.push_back(*o);
    }
  }
  if (auto s = ctx.servers->Get(spec.server_ns, spec.server_name)) vc.servers.push_back(*s);
  return vc;
}

// The probe's CA file for a server with spec.tls.caSecretRef ("" when none).
Result<std::string> CaFile(const ReconcileContext& ctx, const ServerSpec& server) {
  if (server.ca_secret.empty()) return std::string();
  auto s = GetSecretOrNull(ctx.client, server.ns, server.ca_secret);
  if (!s.ok()) return s.status();
  SecretData d = s->is_null() ? SecretData{} : DecodeSecretData(*s);
  auto it = d.find(server.ca_key);
  if (it == d.end()) {
    return Status::NotFound("CA Secret " + server.ns + "/" + server.ca_secret + " key " +
                            server.ca_key + " (NatsServer spec.tls.caSecretRef) not found");
  }
  std::string path = ctx.ca_dir + "/" + server.ns + "_" + server.name + ".crt";
  std::ofstream(path, std::ios::trunc) << it->second;
  return path;
}

struct ProbeVerdict {
  bool ok = false;
  std::string reason;
  std::string message;
  int64_t max_payload = 0;
  bool reload_pending = false;  // retry soon
};

ProbeVerdict Judge(const Result<pubsub::ProbeReport>& r, bool recently_written) {
  ProbeVerdict v;
  if (r.ok()) {
    v.ok = true;
    v.reason = "Probed";
    v.message =
        "connected with the installation's credentials; publish/subscribe on its prefix "
        "round-tripped";
    v.max_payload = r->server_max_payload;
    return v;
  }
  v.message = r.status().message();
  switch (r.status().code()) {
    case StatusCode::kUnavailable:
      v.reason = "ServerUnreachable";
      break;
    case StatusCode::kUnauthenticated:
      v.reason = recently_written ? "ConfigNotReloaded" : "AuthFailed";
      break;
    case StatusCode::kFailedPrecondition:
      v.reason = "MaxPayloadTooSmall";
      break;
    case StatusCode::kPermissionDenied:
      v.reason = recently_written ? "ConfigNotReloaded" : "PermissionDenied";
      break;
    case StatusCode::kTimeout:
      v.reason = recently_written ? "ConfigNotReloaded" : "ServerUnreachable";
      break;
    default:
      v.reason = "ServerUnreachable";
      break;
  }
  if (v.reason == "ConfigNotReloaded") {
    v.reload_pending = true;
    v.message = "the server has not loaded the rendered config yet (" + v.message + ")";
  }
  return v;
}

}  // namespace

struct BackendReconciler::Impl {
  BackendReconciler* self;
  const ReconcileContext& ctx;
  const json& obj;
  BackendSpec spec;
  StatusBuilder sb;

  Impl(BackendReconciler* s, const json& o)
      : self(s), ctx(s->ctx_), obj(o), spec(ReadBackendSpec(o)), sb(o, GenerationOf(o)) {}

  Result<Action> Finish(Action action) {
    EventOnTransition(ctx, obj, sb);
    SB_RETURN_IF_ERROR(WriteStatus(ctx, obj, sb.status));
    return action;
  }

  // A step failed for a reason the user must fix (or that fixes itself
  // later): Ready=False with the reason; the caller decides the requeue.
  Result<Action> NotReady(std::string_view cond, std::string_view reason, const std::string& msg,
                          Action action) {
    if (!cond.empty()) sb.Set(cond, false, reason, msg);
    sb.Ready(false, reason, msg);
    return Finish(action);
  }

  Result<Action> WriteEnv(const SecretData& env, bool* conflict) {
    auto w = EnsureOwnedSecret(ctx.client, obj, spec.ns, spec.env_secret, env);
    if (!w.ok()) {
      if (w.status().code() == StatusCode::kFailedPrecondition) {
        *conflict = true;
        return NotReady("EnvSecretReady", "SecretConflict", w.status().message(),
                        Action::AwaitChange());
      }
      return w.status();
    }
    *conflict = false;
    sb.Set("EnvSecretReady", true, "EnvSecretWritten", "Secret " + spec.env_secret + " written");
    sb.status["envSecretName"] = spec.env_secret;
    sb.status["envSecretHash"] = EnvHash(env);
    return Action::AwaitChange();
  }

  // The env Secret from `creds` (env_* : the previous user while Staged),
  // with status.username and status.rotation to match.
  Result<Action> WriteCredentialsEnv(const ServerSpec& server, const Credentials& creds,
                                     bool* conflict) {
    auto w = WriteEnv(NatsEnv(server.url, creds.env_username, creds.env_password, spec.prefix),
                      conflict);
    if (!w.ok() || *conflict) return w;
    sb.status["username"] = creds.env_username;
    if (creds.staged()) {
      sb.status["rotation"] = {{"phase", kPhaseStaged}};
    } else if (creds.rotating) {
      sb.status["rotation"] = {{"phase", kPhaseRetiring}, {"retiresAt", creds.retires_at}};
    } else {
      sb.status.erase("rotation");
    }
    return w;
  }

  Result<Action> Invalid(const validation::Report& report) {
    std::string msg;
    for (const auto& f : report.errors) {
      if (!msg.empty()) msg += "; ";
      msg += f.ToString();
    }
    // An invalid backend contributes no user but stays bound, so its server
    // does not wait for it.
    if (spec.kind == "nats" && !spec.server_name.empty()) {
      if (ctx.registry->Set(spec.key(), spec.server_key(), {}) >
          ctx.registry->RenderedEpoch(spec.server_key())) {
        ctx.enqueue_server(spec.server_key());
      }
    } else if (auto old = ctx.registry->ServerOf(spec.key()); !old.empty()) {
      ctx.registry->Remove(spec.key(), old);
      ctx.enqueue_server(old);
    }
    auto r = NotReady("", "InvalidSpec", msg, Action::Terminal());
    if (!r.ok()) return r.status();
    return Action::Terminal();
  }

  Result<Action> Rabbit() {
    auto s = GetSecretOrNull(ctx.client, spec.ns, spec.url_secret);
    if (!s.ok()) return s.status();
    SecretData d = s->is_null() ? SecretData{} : DecodeSecretData(*s);
    auto url = d.find(spec.url_key);
    if (url == d.end() || url->second.empty()) {
      return NotReady(
          "CredentialsReady", "CredentialsNotFound",
          "Secret " + spec.ns + "/" + spec.url_secret + " key \"" + spec.url_key +
              "\" (spec.rabbitmq.urlSecretRef) not found; create it with the amqp(s):// URL",
          Action::AwaitChange());
    }
    if (url->second.rfind("amqp://", 0) != 0 && url->second.rfind("amqps://", 0) != 0) {
      // Validated here because the rules cannot see Secret contents; the
      // URL itself is never echoed (it may hold a password).
      return NotReady("CredentialsReady", "InvalidSpec",
                      "Secret " + spec.ns + "/" + spec.url_secret + " key \"" + spec.url_key +
                          "\" is not an amqp:// or amqps:// URL",
                      Action::AwaitChange());
    }
    sb.Set("CredentialsReady", true, "Found", "RabbitMQ URL found");
    bool conflict = false;
    auto w = WriteEnv(RabbitEnv(url->second, spec.max_pub, spec.max_sub), &conflict);
    if (!w.ok() || conflict) return w;
    sb.Ready(true, "EnvSecretWritten", "env Secret written (rabbitmq: nothing to probe)");
    return Finish(Action::AwaitChange());
  }

  Result<Action> Postgres() {
    bool conflict = false;
    auto w = WriteEnv(PostgresEnv(spec.max_conns, spec.min_conns), &conflict);
    if (!w.ok() || conflict) return w;
    sb.Ready(true, "EnvSecretWritten", "env Secret written (postgres: nothing to probe)");
    return Finish(Action::AwaitChange());
  }

  void Exclude() {
    if (ctx.registry->Set(spec.key(), spec.server_key(), {}) >
        ctx.registry->RenderedEpoch(spec.server_key())) {
      ctx.enqueue_server(spec.server_key());
    }
  }

  // The NatsServer exists and admits this namespace; otherwise the
  // reconcile's result (Ready=False with the reason, await a change).
  std::optional<Result<Action>> Resolve() {
    auto srv_obj = ctx.servers->Get(spec.server_ns, spec.server_name);
    if (!srv_obj) {
      Exclude();
      return NotReady("", "ServerNotFound",
                      "NatsServer " + spec.server_key() +
                          " (spec.nats.serverRef) does not exist or is not watched; create it or "
                          "fix the reference",
                      Action::AwaitChange());
    }
    ServerSpec server = ReadServerSpec(*srv_obj);
    if (!server.Allows(spec.ns)) {
      Exclude();
      return NotReady("", "NamespaceNotAllowed",
                      "NatsServer " + server.key() + " does not admit namespace " + spec.ns +
                          " (its spec.allowedNamespaces); add it there or use another server",
                      Action::AwaitChange());
    }
    return std::nullopt;
  }

  Result<Action> Nats() {
    auto srv_obj = ctx.servers->Get(spec.server_ns, spec.server_name);
    if (!srv_obj) return Status::Unavailable("NatsServer " + spec.server_key() + " vanished");
    ServerSpec server = ReadServerSpec(*srv_obj);
    auto exclude = [&] { Exclude(); };

    auto creds = EnsureCredentials(ctx.client, obj, spec);
    if (!creds.ok()) {
      const auto code = creds.status().code();
      if (code == StatusCode::kNotFound || code == StatusCode::kFailedPrecondition) {
        exclude();
        return NotReady("CredentialsReady",
                        code == StatusCode::kNotFound ? "CredentialsNotFound" : "SecretConflict",
                        creds.status().message(), Action::AwaitChange());
      }
      return creds.status();
    }
    for (const auto& [reason, msg] : creds->events) Event(ctx, obj, false, reason, msg);
    sb.Set("CredentialsReady", true, "CredentialsReady",
           spec.password_secret.empty() ? "generated; in Secret " + spec.credentials_secret()
                                        : "from Secret " + spec.password_secret);
    sb.status["subject"] = spec.prefix + ".*";

    std::string old_server;
    uint64_t epoch = ctx.registry->Set(spec.key(), server.key(), creds->users, &old_server);
    if (!old_server.empty()) ctx.enqueue_server(old_server);
    if (ctx.registry->RenderedEpoch(server.key()) < epoch) ctx.enqueue_server(server.key());

    // The env Secret: while a rotation is Staged still the previous user
    // (the server may not have loaded the new one yet).
    bool conflict = false;
    auto w = WriteCredentialsEnv(server, *creds, &conflict);
    if (!w.ok() || conflict) return w;

    // When to look again while Retiring.
    auto until_retire = [&] {
      auto d = std::chrono::duration_cast<std::chrono::milliseconds>(
          creds->retires_at_time - std::chrono::system_clock::now());
      return d < 100ms ? std::chrono::milliseconds(100ms) : d;
    };

    if (!ctx.registry->Rendered(spec.key())) {
      sb.Set("ConfigRendered", false, "Pending",
             "waiting for NatsServer " + server.key() + " to render this user");
      // The server reconciler wakes us after its write; the requeue is a safety net.
      return NotReady("", "ConfigNotReloaded",
                      "the user is not yet in NatsServer " + server.key() + "'s config Secret",
                      Action::RequeueAfter(2s));
    }
    sb.Set("ConfigRendered", true, "ConfigRendered",
           "in Secret " + server.ns + "/" + server.config_secret + " key " + server.config_key);

    // Probe, unless an identical setup passed recently.
    auto fingerprint_of = [&] {
      return sb.status.value("envSecretHash", "") + "|" + creds->username + "|" +
             std::to_string(sb.generation) + "|" + server.url + "|" +
             std::to_string(server.max_payload);
    };
    const std::string fingerprint = fingerprint_of();
    {
      std::lock_guard lock(self->memo_mu_);
      auto it = self->probe_memo_.find(spec.key());
      const auto now = std::chrono::steady_clock::now();
      if (it != self->probe_memo_.end() && it->second.fingerprint == fingerprint &&
          now - it->second.at < ctx.probe_interval) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(ctx.probe_interval -
                                                                          (now - it->second.at));
        sb.status["serverMaxPayload"] = it->second.max_payload;
        sb.status["lastProbeTime"] = it->second.time;
        if (creds->rotating) left = std::min(left, until_retire());
        sb.Set("Probed", true, "Probed", "probe passed");
        sb.Ready(true, "Probed", "probe passed with the installation's credentials");
        return Finish(Action::RequeueAfter(left));
      }
    }

    auto ca = CaFile(ctx, server);
    if (!ca.ok()) {
      return NotReady(
          "Probed", "ServerUnreachable", ca.status().message(),
          Action::RequeueAfter(std::min(ctx.probe_interval, std::chrono::milliseconds(10s))));
    }
    pubsub::ProbeOptions po;
    po.urls = server.url;
    po.username = creds->username;
    po.password = creds->password;
    po.subject_prefix = spec.prefix;
    po.ca_file = *ca;
    po.timeout = ctx.probe_timeout;
    auto report = pubsub::Probe(po);
    // While Staged the probe uses the new user, which only the reload adds:
    // a refusal means "not reloaded yet", not broken credentials.
    const bool recent = creds->staged() ||
                        std::chrono::steady_clock::now() - ctx.registry->LastWrite(server.key()) <
                            ctx.reload_window;
    ProbeVerdict v = Judge(report, recent);
    if (ctx.metrics) ctx.metrics->ObserveProbe(v.reason);
    const std::string now_text = NowRfc3339();
    sb.status["lastProbeTime"] = now_text;
    if (!v.ok) {
      std::lock_guard lock(self->memo_mu_);
      self->probe_memo_.erase(spec.key());
    }
    if (!v.ok && creds->staged() && v.reload_pending) {
      // Engines still run with the env Secret's (previous) credentials:
      // Ready is about those while the server has not loaded the new user.
      po.username = creds->env_username;
      po.password = creds->env_password;
      auto env_report = pubsub::Probe(po);
      if (env_report.ok()) {
        sb.status["serverMaxPayload"] = env_report->server_max_payload;
        sb.Set("Probed", true, "RotationStaged",
               "the env Secret's credentials work; user " + creds->username +
                   " waits for the server to load the rendered config");
        sb.Ready(true, "RotationStaged",
                 "probe passed with the env Secret's credentials; the rotation switches them "
                 "once the server accepts user " +
                     creds->username);
        return Finish(Action::RequeueAfter(ctx.reload_retry));
      }
    }
    if (!v.ok) {
      auto retry = v.reload_pending ? ctx.reload_retry
                                    : std::min(ctx.probe_interval, std::chrono::milliseconds(10s));
      if (creds->phase == kPhaseRetiring) retry = std::min(retry, until_retire());
      return NotReady("Probed", v.reason, v.message, Action::RequeueAfter(retry));
    }
    sb.status["serverMaxPayload"] = v.max_payload;
    if (creds->staged()) {
      // The server accepts the new user: engines may now be handed it.
      auto confirmed = ConfirmStaged(ctx.client, obj, spec, *creds);
      if (!confirmed.ok()) return confirmed.status();
      *creds = std::move(*confirmed);
      for (const auto& [reason, msg] : creds->events) Event(ctx, obj, false, reason, msg);
      auto w2 = WriteCredentialsEnv(server, *creds, &conflict);
      if (!w2.ok() || conflict) return w2;
    }
    {
      std::lock_guard lock(self->memo_mu_);
      self->probe_memo_[spec.key()] = {fingerprint_of(), std::chrono::steady_clock::now(),
                                       v.max_payload, now_text};
    }
    auto next = ctx.probe_interval;
    if (creds->rotating) next = std::min(next, until_retire());
    sb.Set("Probed", true, "Probed", v.message);
    sb.Ready(true, "Probed", "probe passed with the installation's credentials");
    return Finish(Action::RequeueAfter(next));
  }

  Result<Action> Finalize() {
    if (!HasFinalizer(obj, kFinalizer)) return Action::AwaitChange();
    std::string skipped;  // why cleanup was skipped (event), empty when done
    if (spec.kind == "nats" && !spec.server_name.empty()) {
      auto srv_obj = ctx.servers->Get(spec.server_ns, spec.server_name);
      if (!srv_obj) {
        skipped = "ServerGone";
      } else {
        ServerSpec server = ReadServerSpec(*srv_obj);
        auto cfg = GetSecretOrNull(ctx.client, server.ns, server.config_secret);
        if (!cfg.ok()) return cfg.status();
        if (cfg->is_null()) skipped = "ConfigTargetMissing";
      }
      if (skipped.empty()) {
        uint64_t epoch;
        {
          std::lock_guard lock(self->memo_mu_);
          auto it = self->removal_epoch_.find(spec.key());
          if (it == self->removal_epoch_.end()) {
            std::string old;
            epoch = ctx.registry->Remove(spec.key(), spec.server_key(), &old);
            if (!old.empty()) ctx.enqueue_server(old);
            self->removal_epoch_[spec.key()] = epoch;
            ctx.enqueue_server(spec.server_key());
          } else {
            epoch = it->second;
          }
        }
        if (ctx.registry->RenderedEpoch(spec.server_key()) < epoch) {
          std::chrono::system_clock::time_point since{};
          ParseRfc3339(obj["metadata"].value("deletionTimestamp", ""), &since);
          if (std::chrono::system_clock::now() - since < 60s) return Action::RequeueAfter(200ms);
          skipped = "CleanupTimedOut";
        }
      }
    }
    SB_RETURN_IF_ERROR(DeleteOwnedSecret(ctx.client, spec.ns, spec.env_secret, spec.uid));
    if (spec.kind == "nats") {
      SB_RETURN_IF_ERROR(
          DeleteOwnedSecret(ctx.client, spec.ns, spec.credentials_secret(), spec.uid));
    }
    if (!skipped.empty()) {
      Event(ctx, obj, true, skipped,
            "finalizer removed without removing the NATS user from NatsServer " +
                spec.server_key() + " (" +
                (skipped == "ServerGone"            ? "the NatsServer is gone"
                 : skipped == "ConfigTargetMissing" ? "its config Secret is gone"
                                                    : "no render within 60 s") +
                ")");
    } else if (spec.kind == "nats") {
      Event(ctx, obj, false, "UserRemoved",
            "NATS user removed from NatsServer " + spec.server_key());
    }
    SB_RETURN_IF_ERROR(RemoveFinalizer(ctx, obj));
    {
      std::lock_guard lock(self->memo_mu_);
      self->removal_epoch_.erase(spec.key());
      self->probe_memo_.erase(spec.key());
    }
    if (spec.kind == "nats" && !spec.server_name.empty()) {
      ctx.registry->Remove(spec.key(), spec.server_key());
      ctx.enqueue_server(spec.server_key());
    }
    log::Info(kLogger, "finalized", {{"key", spec.key()}, {"skipped", skipped}});
    return Action::AwaitChange();
  }
};

Result<Action> BackendReconciler::Reconcile(const std::string& key) {
  kube::ObjectPtr ptr = ctx_.backends->Get(key);
  if (!ptr) {
    // Gone (finalized, or never had our finalizer): forget its users.
    if (auto server = ctx_.registry->ServerOf(key); !server.empty()) {
      ctx_.registry->Remove(key, server);
      ctx_.enqueue_server(server);
    }
    std::lock_guard lock(memo_mu_);
    probe_memo_.erase(key);
    return Action::AwaitChange();
  }
  const json& obj = *ptr;
  Impl impl(this, obj);
  if (IsDeleting(obj)) return impl.Finalize();
  if (!HasFinalizer(obj, kFinalizer)) {
    // The update event brings us back with the finalizer in place.
    SB_RETURN_IF_ERROR(AddFinalizer(ctx_, obj));
    return Action::AwaitChange();
  }

  // Resolution first: a missing server or a namespace it does not admit has
  // its own reason (the shared rules would call both InvalidSpec).
  if (impl.spec.kind == "nats" && !impl.spec.server_name.empty()) {
    if (auto r = impl.Resolve(); r.has_value()) return std::move(*r);
  }
  validation::Report report =
      validation::Validate(obj, BuildContext(ctx_, impl.spec), validation::Operation::kCreate);
  if (!report.ok()) return impl.Invalid(report);

  if (impl.spec.kind == "nats") return impl.Nats();
  if (impl.spec.kind == "rabbitmq") return impl.Rabbit();
  if (impl.spec.kind == "postgres") return impl.Postgres();
  // Unreachable when validation rejects unknown kinds; kept as a guard.
  validation::Report unknown;
  unknown.errors.push_back({"spec.kind", "must be nats, rabbitmq or postgres"});
  return impl.Invalid(unknown);
}

}  // namespace switchboard::controller
