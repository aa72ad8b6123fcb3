#include "provisioner.h"

#include "backend_step.h"
#include "secret_cache.h"
#include "secret_io.h"
#include "status_events.h"
#include "switchboard/api/metadata.h"
#include "switchboard/operator_logic/objects.h"

namespace switchboard::operator_controller {
namespace logic = ::switchboard::operator_logic;

std::optional<Action> Provisioner::Defer(const ServerCall&) { return std::nullopt; }

bool Provisioner::Serves(const api::NatsServerView& server) const {
  return server.provisioning_mode() == mode();
}

std::optional<Action> ReconcileSpacing::Defer(const ServerCall& call,
                                              std::chrono::milliseconds interval) {
  std::lock_guard lock(mu_);
  const auto at = std::chrono::steady_clock::now();
  auto it = last_run_.find(call.key);
  if (it != last_run_.end() && it->second.generation == call.generation) {
    const auto since = at - it->second.at;
    if (since < interval) {
      // Rounded up: a remainder under 1 ms must not requeue at once.
      return Action::RequeueAfter(std::chrono::ceil<std::chrono::milliseconds>(interval - since));
    }
  }
  Run& run = last_run_[call.key];
  run.at = at;
  run.generation = call.generation;
  return std::nullopt;
}

void ReconcileSpacing::Finished(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = last_run_.find(key);
  if (it == last_run_.end()) return;
  it->second.took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - it->second.at);
}

std::chrono::milliseconds ReconcileSpacing::LastTook(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = last_run_.find(key);
  return it == last_run_.end() ? std::chrono::milliseconds(0) : it->second.took;
}

void ReconcileSpacing::Forget(const std::string& key) {
  std::lock_guard lock(mu_);
  last_run_.erase(key);
}

Status WriteServerReport(const ServerCall& call, const ServerReport& report) {
  return WriteStatusAndAnnounce(call.ctx, kube::resources::NatsServer(), call.obj,
                                kube::ResourceVersionOf(call.obj), report.status, report.events);
}

namespace {
std::string ConflictMessage(const std::string& foreign, std::string_view name_field) {
  return foreign + "; or set " + std::string(name_field) + " to another name";
}
}  // namespace

Result<OwnedSecretWrite> WriteServerSecret(const ServerCall& call, const json& desired,
                                           const json* cached, std::string_view name_field) {
  auto w = WriteOwnedSecret(call.ctx.client, desired, cached, call.uid, call.ctx.recent);
  OwnedSecretWrite out;
  if (w.ok()) {
    out.wrote = *w;
    return out;
  }
  if (w.status().code() != StatusCode::kFailedPrecondition) return w.status();
  out.conflict = ConflictMessage(w.status().message(), name_field);
  return out;
}

std::string ForeignSecretConflict(const ServerCall& call, const json* cached,
                                  std::string_view name_field) {
  if (!cached || logic::CheckOwnership(*cached, call.uid) == logic::Ownership::kOwned) return "";
  return ConflictMessage(
      logic::ForeignSecretMessage(api::NamespaceOf(*cached), api::NameOf(*cached)), name_field);
}

Result<CalloutKeysRead> ReadCalloutKeys(const ServerCall& call, std::string_view name_field) {
  const api::NatsServerView& sv = call.view;
  CalloutKeysRead out;
  out.stored_secret = call.ctx.secrets->Get(sv.ns(), sv.callout_secret_name());
  if (auto conflict = ForeignSecretConflict(call, out.stored_secret.get(), name_field);
      !conflict.empty()) {
    out.failure_reason = std::string(logic::reasons::kSecretConflict);
    out.failure_message = std::move(conflict);
    return out;
  }
  if (out.stored_secret) {
    auto data = logic::DecodeSecretData(*out.stored_secret);
    out.stored = data.ok() ? std::move(data).value() : logic::SecretData{};
  }
  out.ca = ReadCa(call.ctx, sv);
  if (!out.ca.ok() && out.ca.status().code() != StatusCode::kNotFound &&
      out.ca.status().code() != StatusCode::kFailedPrecondition) {
    return out.ca.status();
  }
  auto plan = logic::PlanCalloutKeys(
      out.stored, {}, out.ca.ok() ? std::optional<std::string>(*out.ca) : std::nullopt);
  if (!plan.ok()) {
    out.failure_reason = std::string(logic::reasons::kInvalidSpec);
    out.failure_message = plan.status().message();
    return out;
  }
  out.plan = std::move(plan).value();
  return out;
}

CachedInputs::CachedInputs(const ReconcileContext& ctx) : ctx_(ctx), held_(ctx.backends->List()) {
  backends_.reserve(held_.size());
  for (const auto& b : held_) backends_.push_back(b.get());
}

logic::SecretLookup CachedInputs::Lookup() {
  return [this](std::string_view ns, std::string_view name) -> const json* {
    secret_held_ = ctx_.secrets->Get(ns, name);
    return secret_held_.get();
  };
}

}  // namespace switchboard::operator_controller
