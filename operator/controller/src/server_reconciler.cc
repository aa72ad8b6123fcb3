#include "backend_spec.h"
#include "desired.h"
#include "k8s_util.h"
#include "secrets.h"
#include "switchboard/common/log.h"
#include "switchboard/controller/reconcilers.h"
#include "switchboard/validation/validate.h"

namespace switchboard::controller {
namespace {

using namespace std::chrono_literals;

// How long a render waits for bound backends that have not reported since
// the operator started (they would otherwise be dropped from the config).
constexpr auto kStartupWait = 30s;

Status WriteServerStatus(const ReconcileContext& ctx, const json& obj, const json& status) {
  if (obj.contains("status") && obj["status"] == status) return Status::Ok();
  kube::PatchOptions po;
  po.subresource = "status";
  auto r = ctx.client->Patch(kube::resources::NatsServer(), kube::NamespaceOf(obj),
                             kube::NameOf(obj), kube::PatchType::kMerge, {{"status", status}}, po);
  if (!r.ok() && r.status().code() == StatusCode::kNotFound) return Status::Ok();
  return r.status();
}

}  // namespace

Result<Action> ServerReconciler::Reconcile(const std::string& key) {
  kube::ObjectPtr ptr = ctx_.servers->Get(key);
  if (!ptr) {
    // Bound backends learn that their server is gone.
    for (const auto& b : ctx_.backends->List()) {
      if (ServerKeyOf(*b) == key) ctx_.enqueue_backend(kube::ObjectKeyOf(*b));
    }
    return Action::AwaitChange();
  }
  const json& obj = *ptr;
  const int64_t gen = GenerationOf(obj);
  json status =
      obj.contains("status") && obj["status"].is_object() ? obj["status"] : json::object();
  status["observedGeneration"] = gen;
  auto ready = [&](bool ok, std::string_view reason, const std::string& msg) {
    SetCondition(&status["conditions"], Condition("Ready", ok, reason, msg, gen));
  };
  auto event = [&](bool warning, const std::string& reason, const std::string& msg) {
    const json* c = FindCondition(obj, "Ready");
    if (c && c->value("reason", "") == reason && c->value("observedGeneration", int64_t{-1}) == gen)
      return;
    if (ctx_.recorder) {
      ctx_.recorder->Record(obj, warning ? kube::EventType::kWarning : kube::EventType::kNormal,
                            reason, msg);
    }
  };

  validation::Report report = validation::Validate(obj, {}, validation::Operation::kCreate);
  if (!report.ok()) {
    std::string msg;
    for (const auto& f : report.errors) msg += (msg.empty() ? "" : "; ") + f.ToString();
    ready(false, "InvalidSpec", msg);
    event(true, "InvalidSpec", msg);
    SB_RETURN_IF_ERROR(WriteServerStatus(ctx_, obj, status));
    return Action::Terminal();
  }
  ServerSpec server = ReadServerSpec(obj);

  // Every bound backend must have reported (after a restart) before a
  // render, or users would be dropped; deleting ones are excluded anyway.
  std::vector<std::string> waiting;
  for (const auto& b : ctx_.backends->List()) {
    if (ServerKeyOf(*b) != key || IsDeleting(*b)) continue;
    std::string bkey = kube::ObjectKeyOf(*b);
    if (!ctx_.registry->Known(bkey)) waiting.push_back(bkey);
  }
  if (!waiting.empty() && std::chrono::steady_clock::now() - ctx_.started < kStartupWait) {
    for (const auto& b : waiting) ctx_.enqueue_backend(b);
    return Action::RequeueAfter(250ms);
  }

  // Coalesce: whatever changes until the interval has passed goes into one
  // write (checked before the GET, so a burst of events costs nothing).
  const auto since = std::chrono::steady_clock::now() - ctx_.registry->LastWrite(key);
  if (since < ctx_.min_write_interval) {
    return Action::RequeueAfter(
        std::chrono::duration_cast<std::chrono::milliseconds>(ctx_.min_write_interval - since));
  }

  uint64_t epoch = 0;
  RenderInput in;
  in.server_key = key;
  in.max_payload = server.max_payload;
  in.max_pending = server.max_pending;
  in.isolation = server.isolation;
  in.entries = ctx_.registry->Entries(key, &epoch);
  int installations = 0;
  for (const auto& e : in.entries) installations += e.users.empty() ? 0 : 1;
  auto render = RenderInclude(in);
  if (!render.ok()) {
    ready(false, "InvalidSpec", render.status().message());
    event(true, "InvalidSpec", render.status().message());
    SB_RETURN_IF_ERROR(WriteServerStatus(ctx_, obj, status));
    return Action::Terminal();
  }
  const std::string& rendered = render->text;
  const std::string& hash = render->hash;
  installations -= static_cast<int>(render->rejected.size());
  for (const auto& r : render->rejected) {
    log::Warn("server", "installation left out of the render", {{"key", key}, {"why", r}});
  }

  auto current = GetSecretOrNull(ctx_.client, server.ns, server.config_secret);
  if (!current.ok()) return current.status();
  if (!current->is_null() && !IsOwnedBy(*current, server.uid) &&
      !IsManagedBySwitchboard(*current)) {
    std::string msg = "Secret " + server.ns + "/" + server.config_secret +
                      " exists and is not managed by switchboard; delete it or set "
                      "spec.config.secretName to another name";
    ready(false, "SecretConflict", msg);
    event(true, "SecretConflict", msg);
    SB_RETURN_IF_ERROR(WriteServerStatus(ctx_, obj, status));
    return Action::AwaitChange();
  }
  SecretData data = current->is_null() ? SecretData{} : DecodeSecretData(*current);
  bool wrote = false;
  if (data[server.config_key] != rendered || current->is_null()) {
    data[server.config_key] = rendered;
    for (auto it = data.begin(); it != data.end();) {
      it = it->second.empty() && it->first != server.config_key ? data.erase(it) : std::next(it);
    }
    // A Secret labelled as ours but without an owner (pre-created by a
    // chart) is adopted as is: EnsureOwnedSecret wants an ownerReference.
    json owner_view = *current;
    if (!current->is_null() && !IsOwnedBy(*current, server.uid)) {
      owner_view["metadata"]["ownerReferences"].push_back(OwnerReference(obj));
    }
    auto w = EnsureOwnedSecret(ctx_.client, obj, server.ns, server.config_secret, data,
                               current->is_null() ? nullptr : &owner_view);
    if (!w.ok()) return w.status();
    wrote = w->wrote;
    if (wrote) {
      log::Info("server", "config written",
                {{"key", key},
                 {"secret", server.config_secret},
                 {"hash", hash},
                 {"installations", installations},
                 {"bytes", rendered.size()}});
    }
  }
  const uint64_t before = ctx_.registry->RenderedEpoch(key);
  ctx_.registry->MarkRendered(key, epoch, wrote);
  // Wake the backends whose users just became part of the config.
  if (epoch > before) {
    for (const auto& e : in.entries) {
      if (e.epoch > before) ctx_.enqueue_backend(e.backend_key);
    }
    // Finalizing backends wait for a render without them.
    for (const auto& b : ctx_.backends->List()) {
      if (ServerKeyOf(*b) == key && IsDeleting(*b)) ctx_.enqueue_backend(kube::ObjectKeyOf(*b));
    }
  }

  status["installations"] = installations;
  status["configHash"] = hash;
  const std::string msg = std::to_string(installations) + " installation(s) in Secret " +
                          server.config_secret + " key " + server.config_key;
  ready(true, "ConfigRendered", msg);
  SB_RETURN_IF_ERROR(WriteServerStatus(ctx_, obj, status));
  return Action::AwaitChange();
}

}  // namespace switchboard::controller
