#include <algorithm>
#include <map>
#include <mutex>
#include <optional>

#include "authorizer_checks.h"
#include "backend_step.h"
#include "config_index.h"
#include "k8s_util.h"
#include "rules_context.h"
#include "secret_io.h"
#include "status_events.h"
#include "switchboard/api/constants.h"
#include "switchboard/api/packed.h"
#include "switchboard/api/views.h"
#include "switchboard/common/log.h"
#include "switchboard/operator_controller/reconcilers.h"
#include "switchboard/operator_logic/callout.h"
#include "switchboard/operator_logic/callout_status.h"
#include "switchboard/operator_logic/cluster_render.h"
#include "switchboard/operator_logic/conditions.h"
#include "switchboard/operator_logic/objects.h"
#include "switchboard/operator_logic/secrets.h"
#include "switchboard/operator_logic/time_util.h"
#include "switchboard/rules/validate.h"

namespace switchboard::operator_controller {
namespace logic = ::switchboard::operator_logic;
namespace reasons = ::switchboard::operator_logic::reasons;

// When this process last wrote each server's config Secret: only to space
// writes (min_write_interval), never to decide what the file holds.
struct ServerReconciler::State {
  std::mutex mu;
  std::map<std::string, std::chrono::steady_clock::time_point> last_write;
  // AuthCallout: when each server was last reconciled, and at which
  // generation; only to space reconciles (callout_status_interval).
  struct Run {
    std::chrono::steady_clock::time_point at;
    int64_t generation = 0;
  };
  std::map<std::string, Run> last_callout;
};

ServerReconciler::ServerReconciler(ReconcileContext ctx)
    : ctx_(std::move(ctx)), state_(std::make_unique<State>()) {}
ServerReconciler::~ServerReconciler() = default;

namespace {

Status WriteServerStatus(const ReconcileContext& ctx, const json& obj, const json& status) {
  const json current = StatusOf(obj);
  if (current == status) return Status::Ok();
  // A merge patch keeps what it does not name: a field the new status no
  // longer has (authCallout after a switch back to IncludeFile) is nulled.
  json patch = status;
  if (current.is_object()) {
    for (auto it = current.begin(); it != current.end(); ++it) {
      if (!patch.contains(it.key())) patch[it.key()] = nullptr;
    }
  }
  kube::PatchOptions po;
  po.subresource = "status";
  auto r = ctx.client->Patch(kube::resources::NatsServer(), api::NamespaceOf(obj), api::NameOf(obj),
                             kube::PatchType::kMerge, {{"status", patch}}, po);
  if (!r.ok() && r.status().code() == StatusCode::kNotFound) return Status::Ok();
  return r.status();
}

// What the render and the directory read, as the caches hold it now: every
// backend, and the Secrets looked up by name (kept alive while in use).
struct CachedInputs {
  explicit CachedInputs(const ReconcileContext& ctx) : ctx(ctx), held(ctx.backends->List()) {
    backends.reserve(held.size());
    for (const auto& b : held) backends.push_back(b.get());
  }
  logic::SecretLookup Lookup() {
    return [this](std::string_view ns, std::string_view name) -> const json* {
      kube::ObjectPtr s = ctx.secrets->Get(ns, name);
      if (!s) return nullptr;
      secrets_held.push_back(s);
      return s.get();
    };
  }
  const ReconcileContext& ctx;
  std::vector<kube::ObjectPtr> held;
  std::vector<const json*> backends;
  std::vector<kube::ObjectPtr> secrets_held;
};

void EnqueueBound(const ReconcileContext& ctx, const std::string& server_key) {
  for (const auto& b : ctx.backends->List()) {
    api::BackendView v(*b);
    if (auto s = v.bound_server(); s && s->ToString() == server_key) {
      ctx.enqueue_backend(v.key().ToString());
    }
  }
}

}  // namespace

Result<Action> ServerReconciler::Reconcile(const std::string& key) {
  kube::ObjectPtr ptr = ctx_.servers->Get(key);
  if (!ptr) {
    ctx_.configs->ForgetRender(key);
    ForgetCallout(key);
    EnqueueBound(ctx_, key);  // they learn that their server is gone
    return Action::AwaitChange();
  }
  const json& obj = *ptr;
  api::NatsServerView sv(obj);
  if (sv.auth_callout()) return Callout(key, obj);
  // Back in IncludeFile mode (or never left it): nothing of AuthCallout
  // mode stays in the status or the metrics. Its callout Secret stays: a
  // switch back must find the same issuer, which the servers' static
  // config names.
  ForgetCallout(key);
  const json previous = logic::WithoutCalloutStatus(StatusOf(obj));
  const int64_t gen = GenerationOf(obj);
  const std::string now = logic::FormatTime(logic::Clock::now());
  auto fail = [&](std::string_view reason, const std::string& msg) -> Status {
    logic::ServerStatusInput in;
    in.generation = gen;
    in.installations = previous.value("installations", 0);
    in.failure_reason = std::string(reason);
    in.failure_message = msg;
    json status = logic::ComputeServerStatus(previous, in, now);
    AnnounceStatusEvents(ctx_, obj, {logic::ReadyTransitionEvent(StatusOf(obj), status)});
    return WriteServerStatus(ctx_, obj, status);
  };

  rules::Report report = ValidateCached(obj, *ctx_.rules_context->Snapshot());
  if (!report.ok()) {
    std::string msg;
    for (const auto& f : report.errors) msg += (msg.empty() ? "" : "; ") + f.ToString();
    SB_RETURN_IF_ERROR(fail(reasons::kInvalidSpec, msg));
    return Action::Terminal();
  }

  // The render: a pure function of what the caches hold.
  CachedInputs cached(ctx_);
  auto collected = logic::CollectInstallations(obj, cached.backends, cached.Lookup());
  if (!collected.ok()) {
    SB_RETURN_IF_ERROR(fail(reasons::kInvalidSpec, collected.status().message()));
    return Action::Terminal();
  }
  const std::string secret_name = sv.config_secret_name();
  const std::string config_key = sv.config_key();
  kube::ObjectPtr current = ctx_.secrets->Get(sv.ns(), secret_name);
  std::optional<std::string> current_text;
  if (current) {
    auto data = logic::DecodeSecretData(*current);
    if (data.ok() && data->size() == 1 && data->count(config_key)) {
      current_text = std::move(data->at(config_key));
    }
  }
  // At the size ceiling what the file holds now stays.
  if (current_text) collected->input.in_file = logic::UsersInConfig(*current_text);
  auto rendered = logic::RenderNatsConfig(collected->input);
  if (!rendered.ok()) {
    SB_RETURN_IF_ERROR(fail(reasons::kInvalidSpec, rendered.status().message()));
    return Action::Terminal();
  }
  // Each backend whose verdict changed looks again (its status says why it
  // is left out, or that it is back); an unchanged verdict wakes nobody and
  // logs nothing, however often the server renders.
  for (const auto& b : ctx_.configs->RecordRender(key, rendered->rejected)) {
    std::string why = "rendered again";
    for (const auto& r : rendered->rejected) {
      if (r.ns + "/" + r.name == b) why = r.ToString();
    }
    log::Info("server", "render verdict changed", {{"key", key}, {"backend", b}, {"why", why}});
    ctx_.enqueue_backend(b);
  }

  json desired =
      logic::ConfigSecret({sv.ns(), sv.name(), UidOf(obj)}, secret_name, config_key, *rendered);
  const bool differs = !current_text || *current_text != rendered->text;
  if (differs) {
    // Coalesce: changes until the interval has passed go into one write.
    {
      std::lock_guard lock(state_->mu);
      auto since = std::chrono::steady_clock::now() - state_->last_write[key];
      if (since < ctx_.min_write_interval) {
        return Action::RequeueAfter(
            std::chrono::ceil<std::chrono::milliseconds>(ctx_.min_write_interval - since));
      }
    }
    auto w = WriteOwnedSecret(ctx_.client, desired, current.get(), UidOf(obj), ctx_.recent);
    if (!w.ok()) {
      if (w.status().code() == StatusCode::kFailedPrecondition) {
        SB_RETURN_IF_ERROR(fail(reasons::kSecretConflict, w.status().message() +
                                                              "; or set spec.config.secretName "
                                                              "to another name"));
        return Action::AwaitChange();
      }
      return w.status();
    }
    {
      std::lock_guard lock(state_->mu);
      state_->last_write[key] = std::chrono::steady_clock::now();
    }
    log::Info("server", "config written",
              {{"key", key},
               {"secret", secret_name},
               {"hash", rendered->hash},
               {"installations", rendered->installations},
               {"bytes", rendered->text.size()}});
    // The bound backends look again once the cache has the new Secret (its
    // watch event enqueues them); nothing to do here.
  }

  logic::ServerStatusInput in;
  in.generation = gen;
  in.installations = rendered->installations;
  in.config_hash = rendered->hash;
  in.left_out = rendered->left_out;
  in.left_out_full = rendered->left_out_full;
  in.users_left_out_full = rendered->users_left_out_full;
  in.config_bytes = rendered->text.size();
  in.max_bytes = collected->input.max_bytes.value_or(0);
  in.reserve_bytes = collected->input.reserve_bytes;
  json status = logic::ComputeServerStatus(previous, in, now);
  AnnounceStatusEvents(ctx_, obj,
                       {logic::ReadyTransitionEvent(StatusOf(obj), status),
                        logic::ConfigFitsEvent(StatusOf(obj), status)});
  SB_RETURN_IF_ERROR(WriteServerStatus(ctx_, obj, status));
  return Action::AwaitChange();
}

void ServerReconciler::ForgetCallout(const std::string& key) {
  {
    std::lock_guard lock(state_->mu);
    state_->last_callout.erase(key);
  }
  if (ctx_.authorizer_checks) ctx_.authorizer_checks->Forget(key);
  if (const auto slash = key.find('/'); ctx_.metrics && slash != std::string::npos) {
    ctx_.metrics->ForgetAuthorizers(key.substr(0, slash), key.substr(slash + 1));
  }
}

// AuthCallout mode: the callout Secret's keys (PlanCalloutKeys), the static
// config in the config Secret (RenderCalloutConfig; same name and key as
// IncludeFile mode), the status, and whether every NATS server has an
// authorizer (asked off this worker, rechecked every authorizer_recheck).
// No user goes into any file: the authorizer reads the directory from the
// same caches.
Result<Action> ServerReconciler::Callout(const std::string& key, const json& obj) {
  api::NatsServerView sv(obj);
  const int64_t gen = GenerationOf(obj);
  const std::string uid = UidOf(obj);
  const json previous = StatusOf(obj);
  {
    // A spec change goes through at once; anything else at most once per
    // interval (the deferred reconcile sees every change until then).
    std::lock_guard lock(state_->mu);
    const auto at = std::chrono::steady_clock::now();
    auto it = state_->last_callout.find(key);
    if (it != state_->last_callout.end() && it->second.generation == gen) {
      const auto since = at - it->second.at;
      if (since < ctx_.callout_status_interval) {
        // Rounded up: a remainder under 1 ms must not requeue at once.
        return Action::RequeueAfter(
            std::chrono::ceil<std::chrono::milliseconds>(ctx_.callout_status_interval - since));
      }
    }
    state_->last_callout[key] = {at, gen};
  }
  const std::string now = logic::FormatTime(logic::Clock::now());
  logic::CalloutServerStatusInput in;
  in.generation = gen;
  in.account = sv.callout_account();
  in.installations = previous.value("installations", 0);
  auto report = [&](Action action) -> Result<Action> {
    json status = logic::ComputeCalloutServerStatus(previous, in, now);
    AnnounceStatusEvents(ctx_, obj,
                         {logic::ReadyTransitionEvent(previous, status),
                          logic::AuthorizerAvailableEvent(previous, status)});
    if (in.authorizers && ctx_.metrics) {
      ctx_.metrics->SetAuthorizers(sv.ns(), sv.name(), in.authorizers->authorizers,
                                   in.authorizers->servers);
    }
    SB_RETURN_IF_ERROR(WriteServerStatus(ctx_, obj, status));
    return action;
  };
  auto fail = [&](std::string_view reason, const std::string& msg, Action action) {
    in.failure_reason = std::string(reason);
    in.failure_message = msg;
    return report(action);
  };

  rules::Report valid = rules::Validate(api::ApiShaped(obj), {}, rules::Operation::kCreate);
  if (!valid.ok()) {
    std::string msg;
    for (const auto& f : valid.errors) msg += (msg.empty() ? "" : "; ") + f.ToString();
    return fail(reasons::kInvalidSpec, msg, Action::Terminal());
  }
  // The file-mode verdicts of this server no longer apply: the backends
  // they held back look again.
  for (const auto& b : ctx_.configs->RecordRender(key, {})) ctx_.enqueue_backend(b);

  // 1. The keys. What is stored and valid stays (the issuer above all: the
  //    servers' static config names it and cannot reload it).
  const std::string callout_name = sv.callout_secret_name();
  kube::ObjectPtr stored_secret = ctx_.secrets->Get(sv.ns(), callout_name);
  if (stored_secret && logic::CheckOwnership(*stored_secret, uid) != logic::Ownership::kOwned) {
    return fail(reasons::kSecretConflict,
                logic::ForeignSecretMessage(sv.ns(), callout_name) +
                    "; or set spec.provisioning.authCallout.secretName to another name",
                Action::AwaitChange());
  }
  std::optional<logic::SecretData> stored;
  if (stored_secret) {
    // Undecodable data counts as empty: the plan then generates what is
    // missing, as for a Secret someone emptied.
    auto data = logic::DecodeSecretData(*stored_secret);
    stored = data.ok() ? std::move(data).value() : logic::SecretData{};
  }
  // The CA the authorizer verifies the servers with: spec.tls.caSecretRef's,
  // copied into the callout Secret (the authorizer reads managed Secrets
  // only). Read on every reconcile, so a rotated CA reaches the authorizer
  // with the next one; while it cannot be read, the stored copy stays.
  auto ca = ReadCa(ctx_, sv);
  if (!ca.ok() && ca.status().code() != StatusCode::kNotFound &&
      ca.status().code() != StatusCode::kFailedPrecondition) {
    return ca.status();
  }
  auto plan =
      logic::PlanCalloutKeys(stored, {}, ca.ok() ? std::optional<std::string>(*ca) : std::nullopt);
  if (!plan.ok())
    return fail(reasons::kInvalidSpec, plan.status().message(), Action::AwaitChange());
  json callout_secret = logic::CalloutSecret({sv.ns(), sv.name(), uid}, callout_name,
                                             logic::EncodeCalloutKeys(plan->keys));
  auto wrote = WriteOwnedSecret(ctx_.client, callout_secret, stored_secret.get(), uid, ctx_.recent);
  if (!wrote.ok()) {
    if (wrote.status().code() == StatusCode::kFailedPrecondition) {
      return fail(reasons::kSecretConflict,
                  wrote.status().message() +
                      "; or set spec.provisioning.authCallout.secretName to another name",
                  Action::AwaitChange());
    }
    return wrote.status();
  }
  if (*wrote) {
    log::Info("server", "callout keys written",
              {{"key", key}, {"secret", callout_name}, {"note", plan->note}});
  }
  in.issuer = plan->keys.issuer;

  // 2. The directory's size (the authorizer builds the same from its caches).
  CachedInputs cached(ctx_);
  auto directory = logic::CollectDirectory(obj, cached.backends, cached.Lookup());
  if (!directory.ok()) {
    return fail(reasons::kInvalidSpec, directory.status().message(), Action::Terminal());
  }
  in.installations = static_cast<int>(directory->by_user.size());

  // 3. The static config, in the config Secret.
  logic::CalloutConfigInput ci;
  ci.server_ns = sv.ns();
  ci.server_name = sv.name();
  auto max_payload = sv.max_payload();
  if (!max_payload) {
    return fail(reasons::kInvalidSpec,
                "spec.maxPayload: not a byte quantity; use e.g. 16Mi or 16777216",
                Action::Terminal());
  }
  ci.max_payload = *max_payload;
  ci.account = sv.callout_account();
  ci.issuer = plan->keys.issuer;
  ci.authorizer_bcrypt = plan->keys.authorizer.bcrypt;
  ci.system_bcrypt = plan->keys.system.bcrypt;
  auto text = logic::RenderCalloutConfig(ci);
  if (!text.ok()) return fail(reasons::kInvalidSpec, text.status().message(), Action::Terminal());
  logic::RenderedConfig rendered;
  rendered.text = std::move(text).value();
  rendered.hash = logic::ConfigHash(rendered.text);
  rendered.installations = in.installations;
  const std::string secret_name = sv.config_secret_name();
  kube::ObjectPtr current = ctx_.secrets->Get(sv.ns(), secret_name);
  json desired =
      logic::ConfigSecret({sv.ns(), sv.name(), uid}, secret_name, sv.config_key(), rendered);
  auto w = WriteOwnedSecret(ctx_.client, desired, current.get(), uid, ctx_.recent);
  if (!w.ok()) {
    if (w.status().code() == StatusCode::kFailedPrecondition) {
      return fail(reasons::kSecretConflict,
                  w.status().message() + "; or set spec.config.secretName to another name",
                  Action::AwaitChange());
    }
    return w.status();
  }
  if (*w) {
    log::Info("server", "callout config written",
              {{"key", key}, {"secret", secret_name}, {"hash", rendered.hash}});
  }
  in.config_hash = rendered.hash;
  // Not a watched Secret (it has no managed-by label): looked at again soon.
  if (!ca.ok()) {
    return fail(reasons::kServerUnreachable, ca.status().message(),
                Action::RequeueAfter(std::min<std::chrono::milliseconds>(
                    ctx_.authorizer_recheck, std::chrono::seconds(10))));
  }

  // 4. Authorizers: the last answer taken for these keys and URLs, if any;
  //    a new question when there is none or it is older than the recheck.
  Action next = Action::RequeueAfter(ctx_.authorizer_recheck);
  if (ctx_.authorizer_checks) {
    const std::string ca_file = CaFileOf(ctx_, sv, *ca);
    const std::string fingerprint =
        sv.url() + "|" + ca_file + "|" + plan->keys.system.bcrypt + "|" + plan->keys.issuer;
    auto last = ctx_.authorizer_checks->Latest(key);
    if (last && last->fingerprint != fingerprint) last.reset();
    auto age = last ? std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - last->at)
                    : ctx_.authorizer_recheck;
    if (last) in.authorizers = logic::DecideAuthorizerAvailability(last->replies);
    if (age >= ctx_.authorizer_recheck) {
      PingRequest g;
      g.connection.urls = sv.url();
      g.connection.username = std::string(api::kCalloutSystemUsername);
      g.connection.password = plan->keys.system.password;
      g.connection.ca_file = ca_file;
      g.connection.name = "switchboard-operator";
      g.connection.connect_timeout = ctx_.probe_timeout;
      g.subject = std::string(logic::kAuthorizerPingSubject);
      g.body = logic::AuthorizerPingBody();
      g.window = ctx_.authorizer_window;
      // Done: this server is enqueued again and reads the answer.
      ctx_.authorizer_checks->Submit(key, fingerprint, std::move(g));
    } else {
      next = Action::RequeueAfter(ctx_.authorizer_recheck - age);
    }
  }
  return report(next);
}

}  // namespace switchboard::operator_controller
