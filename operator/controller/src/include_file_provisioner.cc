#include "include_file_provisioner.h"

#include <optional>

#include "config_index.h"
#include "secret_cache.h"
#include "switchboard/api/constants.h"
#include "switchboard/common/log.h"
#include "switchboard/operator_logic/callout_status.h"
#include "switchboard/operator_logic/cluster_render.h"
#include "switchboard/operator_logic/conditions.h"
#include "switchboard/operator_logic/objects.h"
#include "switchboard/operator_logic/secrets.h"
#include "switchboard/operator_logic/usage.h"

namespace switchboard::operator_controller {
namespace logic = ::switchboard::operator_logic;
namespace reasons = ::switchboard::operator_logic::reasons;

namespace {
// The stored status without what only AuthCallout mode reports: back in
// this mode (or never out of it), none of it stays.
json PreviousOf(const json& obj) { return logic::WithoutCalloutStatus(StatusOf(obj)); }
}  // namespace

std::string_view IncludeFileProvisioner::mode() const { return api::kProvisioningIncludeFile; }

ServerReport IncludeFileProvisioner::Refused(const ServerCall& call, std::string_view reason,
                                             const std::string& message) const {
  const json previous = PreviousOf(call.obj);
  logic::ServerStatusInput in;
  in.generation = call.generation;
  in.installations = previous.value("installations", 0);
  in.failure_reason = std::string(reason);
  in.failure_message = message;
  ServerReport report{logic::ComputeServerStatus(previous, in, call.now), {}};
  report.events.push_back(logic::ReadyTransitionEvent(StatusOf(call.obj), report.status));
  return report;
}

Result<Action> IncludeFileProvisioner::Provision(const ServerCall& call) {
  const std::string& key = call.key;
  const api::NatsServerView& sv = call.view;
  auto fail = [&](std::string_view reason, const std::string& msg) {
    return WriteServerReport(call, Refused(call, reason, msg));
  };

  // The render: a pure function of what the caches hold.
  CachedInputs cached(ctx_);
  auto collected = logic::CollectInstallations(call.obj, cached.backends(), cached.Lookup());
  if (!collected.ok()) {
    SB_RETURN_IF_ERROR(fail(reasons::kInvalidSpec, collected.status().message()));
    return Action::Terminal();
  }
  // The system user the usage collector logs in as (spec.usage.systemUser):
  // its password stays in a Secret of ours, only its hash goes into the file.
  const bool system_user = logic::UsageSystemUserOf(call.obj);
  std::string system_bcrypt;
  if (system_user) {
    constexpr std::string_view kField = "spec.usage.systemUser";
    const std::string system_name = logic::UsageSystemSecretName(sv.name());
    kube::ObjectPtr stored_secret = ctx_.secrets->Get(sv.ns(), system_name);
    if (auto conflict = ForeignSecretConflict(call, stored_secret.get(), kField);
        !conflict.empty()) {
      SB_RETURN_IF_ERROR(fail(reasons::kSecretConflict, conflict));
      return Action::AwaitChange();
    }
    std::optional<logic::SecretData> stored;
    if (stored_secret) {
      auto data = logic::DecodeSecretData(*stored_secret);
      stored = data.ok() ? std::move(data).value() : logic::SecretData{};
    }
    auto plan = logic::PlanUsageSystemSecret(stored);
    if (!plan.ok()) return plan.status();
    json system_secret =
        logic::CalloutSecret({sv.ns(), sv.name(), call.uid}, system_name, plan->data);
    auto wrote = WriteServerSecret(call, system_secret, stored_secret.get(), kField);
    if (!wrote.ok()) return wrote.status();
    if (!wrote->conflict.empty()) {
      SB_RETURN_IF_ERROR(fail(reasons::kSecretConflict, wrote->conflict));
      return Action::AwaitChange();
    }
    if (wrote->wrote)
      log::Info("server", "system user written", {{"key", key}, {"secret", system_name}});
    system_bcrypt = plan->bcrypt;
    if (collected->input.max_bytes) {
      *collected->input.max_bytes -= logic::SystemUserBytes(system_bcrypt);
    }
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
  if (system_user) {
    if (Status added = logic::AddSystemUser(*rendered, collected->input.isolation, system_bcrypt);
        !added.ok()) {
      SB_RETURN_IF_ERROR(fail(reasons::kInvalidSpec, added.message()));
      return Action::Terminal();
    }
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
      logic::ConfigSecret({sv.ns(), sv.name(), call.uid}, secret_name, config_key, *rendered);
  const bool differs = !current_text || *current_text != rendered->text;
  if (differs) {
    // Coalesce: changes until the interval has passed go into one write.
    {
      std::lock_guard lock(mu_);
      auto since = std::chrono::steady_clock::now() - last_write_[key];
      if (since < ctx_.min_write_interval) {
        return Action::RequeueAfter(
            std::chrono::ceil<std::chrono::milliseconds>(ctx_.min_write_interval - since));
      }
    }
    auto w = WriteServerSecret(call, desired, current.get(), "spec.config.secretName");
    if (!w.ok()) return w.status();
    if (!w->conflict.empty()) {
      SB_RETURN_IF_ERROR(fail(reasons::kSecretConflict, w->conflict));
      return Action::AwaitChange();
    }
    {
      std::lock_guard lock(mu_);
      last_write_[key] = std::chrono::steady_clock::now();
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

  // The file as NATS has it now: written above, or already these bytes.
  if (ctx_.metrics) {
    ctx_.metrics->SetConfigBytes(sv.ns(), sv.name(), rendered->text.size(),
                                 collected->input.max_bytes.value_or(0));
  }

  const json previous = PreviousOf(call.obj);
  logic::ServerStatusInput in;
  in.generation = call.generation;
  in.installations = rendered->installations;
  in.config_hash = rendered->hash;
  in.left_out = rendered->left_out;
  in.left_out_full = rendered->left_out_full;
  in.users_left_out_full = rendered->users_left_out_full;
  in.config_bytes = rendered->text.size();
  in.max_bytes = collected->input.max_bytes.value_or(0);
  in.reserve_bytes = collected->input.reserve_bytes;
  ServerReport report{logic::ComputeServerStatus(previous, in, call.now), {}};
  report.events = {logic::ReadyTransitionEvent(StatusOf(call.obj), report.status),
                   logic::ConfigFitsEvent(StatusOf(call.obj), report.status)};
  SB_RETURN_IF_ERROR(WriteServerReport(call, report));
  return Action::AwaitChange();
}

void IncludeFileProvisioner::Retire(const std::string& key) {
  for (const auto& b : ctx_.configs->RecordRender(key, {})) ctx_.enqueue_backend(b);
  ForgetGauges(key);
}

void IncludeFileProvisioner::Forget(const std::string& key) {
  ctx_.configs->ForgetRender(key);
  ForgetGauges(key);
  std::lock_guard lock(mu_);
  last_write_.erase(key);
}

void IncludeFileProvisioner::ForgetGauges(const std::string& key) {
  if (const auto slash = key.find('/'); ctx_.metrics && slash != std::string::npos) {
    ctx_.metrics->ForgetConfigBytes(key.substr(0, slash), key.substr(slash + 1));
  }
}

}  // namespace switchboard::operator_controller
