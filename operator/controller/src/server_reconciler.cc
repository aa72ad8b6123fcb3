#include <map>
#include <mutex>
#include <optional>

#include "config_index.h"
#include "k8s_util.h"
#include "rules_context.h"
#include "secret_io.h"
#include "switchboard/api/constants.h"
#include "switchboard/api/views.h"
#include "switchboard/common/log.h"
#include "switchboard/kube/cache_shapes.h"
#include "switchboard/operator_controller/reconcilers.h"
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
};

ServerReconciler::ServerReconciler(ReconcileContext ctx)
    : ctx_(std::move(ctx)), state_(std::make_unique<State>()) {}
ServerReconciler::~ServerReconciler() = default;

namespace {

Status WriteServerStatus(const ReconcileContext& ctx, const json& obj, const json& status) {
  if (StatusOf(obj) == status) return Status::Ok();
  kube::PatchOptions po;
  po.subresource = "status";
  auto r = ctx.client->Patch(kube::resources::NatsServer(), api::NamespaceOf(obj), api::NameOf(obj),
                             kube::PatchType::kMerge, {{"status", status}}, po);
  if (!r.ok() && r.status().code() == StatusCode::kNotFound) return Status::Ok();
  return r.status();
}

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
    EnqueueBound(ctx_, key);  // they learn that their server is gone
    return Action::AwaitChange();
  }
  const json& obj = *ptr;
  api::NatsServerView sv(obj);
  const int64_t gen = GenerationOf(obj);
  const std::string now = logic::FormatTime(logic::Clock::now());
  auto fail = [&](std::string_view reason, const std::string& msg) -> Status {
    logic::ServerStatusInput in;
    in.generation = gen;
    in.installations = StatusOf(obj).value("installations", 0);
    in.failure_reason = std::string(reason);
    in.failure_message = msg;
    json status = logic::ComputeServerStatus(StatusOf(obj), in, now);
    if (auto ev = logic::ReadyTransitionEvent(StatusOf(obj), status); ev && ctx_.recorder) {
      ctx_.recorder->Record(obj, kube::EventType::kWarning, ev->reason, ev->message);
    }
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
  std::vector<kube::ObjectPtr> held = ctx_.backends->List();
  std::vector<const json*> backends;
  backends.reserve(held.size());
  for (const auto& b : held) backends.push_back(b.get());
  std::vector<kube::ObjectPtr> secrets_held;  // keeps looked-up Secrets alive
  auto lookup = [&](std::string_view ns, std::string_view name) -> const json* {
    kube::ObjectPtr s = ctx_.secrets->Get(ns, name);
    if (!s) return nullptr;
    secrets_held.push_back(s);
    return s.get();
  };
  auto collected = logic::CollectInstallations(obj, backends, lookup);
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
            std::chrono::duration_cast<std::chrono::milliseconds>(ctx_.min_write_interval - since));
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
  json status = logic::ComputeServerStatus(StatusOf(obj), in, now);
  for (auto ev : {logic::ReadyTransitionEvent(StatusOf(obj), status),
                  logic::ConfigFitsEvent(StatusOf(obj), status)}) {
    if (ev && ctx_.recorder) {
      ctx_.recorder->Record(obj, ev->warning ? kube::EventType::kWarning : kube::EventType::kNormal,
                            ev->reason, ev->message);
    }
  }
  SB_RETURN_IF_ERROR(WriteServerStatus(ctx_, obj, status));
  return Action::AwaitChange();
}

}  // namespace switchboard::operator_controller
