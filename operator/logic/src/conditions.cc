#include "switchboard/operator_logic/conditions.h"

#include <algorithm>
#include <array>

#include "switchboard/api/constants.h"

namespace switchboard::operator_logic {
namespace {

namespace ct = condition_types;

std::string_view StepConditionType(Step step) {
  switch (step) {
    case Step::kCredentials:
      return ct::kCredentialsReady;
    case Step::kRenderConfig:
      return ct::kConfigRendered;
    case Step::kEnvSecret:
      return ct::kEnvSecretReady;
    case Step::kProbe:
      return ct::kProbed;
    case Step::kValidate:
    case Step::kResolveServer:
      break;
  }
  return "";
}

std::string_view StepName(Step step) {
  switch (step) {
    case Step::kValidate:
      return "validation";
    case Step::kResolveServer:
      return "resolving the NatsServer";
    case Step::kCredentials:
      return "credentials";
    case Step::kRenderConfig:
      return "rendering the NATS config";
    case Step::kEnvSecret:
      return "writing the env Secret";
    case Step::kProbe:
      return "the live probe";
  }
  return "";
}

// Sub-conditions per kind, in the order they are written.
std::vector<std::string_view> SubConditions(BackendKind kind) {
  switch (kind) {
    case BackendKind::kNats:
      return {ct::kCredentialsReady, ct::kConfigRendered, ct::kEnvSecretReady, ct::kProbed};
    case BackendKind::kRabbitMq:
      return {ct::kCredentialsReady, ct::kEnvSecretReady};
    case BackendKind::kPostgres:
      return {ct::kEnvSecretReady};
  }
  return {};
}

std::string GetString(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

nlohmann::json ToJson(const Condition& c) {
  return {{"type", c.type},
          {"status", c.status},
          {"reason", c.reason},
          {"message", c.message},
          {"observedGeneration", c.observed_generation},
          {"lastTransitionTime", c.last_transition_time}};
}

Result<Condition> ConditionFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Status::InvalidArgument("condition: not an object");
  Condition c;
  c.type = GetString(j, "type");
  c.status = GetString(j, "status");
  if (c.type.empty()) return Status::InvalidArgument("condition: type is missing");
  if (c.status.empty()) return Status::InvalidArgument("condition " + c.type + ": no status");
  c.reason = GetString(j, "reason");
  c.message = GetString(j, "message");
  c.last_transition_time = GetString(j, "lastTransitionTime");
  if (auto it = j.find("observedGeneration"); it != j.end() && it->is_number_integer()) {
    c.observed_generation = it->get<int64_t>();
  }
  return c;
}

std::vector<Condition> ConditionsFromJson(const nlohmann::json& array) {
  std::vector<Condition> out;
  if (!array.is_array()) return out;
  for (const auto& item : array) {
    auto c = ConditionFromJson(item);
    if (c.ok()) out.push_back(std::move(c).value());
  }
  return out;
}

nlohmann::json ToJson(const std::vector<Condition>& conditions) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : conditions) out.push_back(ToJson(c));
  return out;
}

std::optional<Condition> ConditionOf(const nlohmann::json& status, std::string_view type) {
  if (!status.is_object()) return std::nullopt;
  auto it = status.find("conditions");
  if (it == status.end() || !it->is_array()) return std::nullopt;
  for (const auto& item : *it) {
    if (GetString(item, "type") != type) continue;
    auto c = ConditionFromJson(item);
    if (c.ok()) return std::move(c).value();
  }
  return std::nullopt;
}

const Condition* FindCondition(const std::vector<Condition>& conditions, std::string_view type) {
  for (const auto& c : conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

bool SetCondition(std::vector<Condition>& conditions, Condition c, std::string_view now_rfc3339) {
  for (auto& old : conditions) {
    if (old.type != c.type) continue;
    const bool changed = old.status != c.status || old.reason != c.reason ||
                         old.message != c.message ||
                         old.observed_generation != c.observed_generation;
    c.last_transition_time = old.status == c.status && !old.last_transition_time.empty()
                                 ? old.last_transition_time
                                 : std::string(now_rfc3339);
    old = std::move(c);
    return changed;
  }
  c.last_transition_time = std::string(now_rfc3339);
  conditions.push_back(std::move(c));
  return true;
}

Result<BackendKind> ParseBackendKind(std::string_view text) {
  if (text == api::kBackendNats) return BackendKind::kNats;
  if (text == api::kBackendRabbitmq) return BackendKind::kRabbitMq;
  if (text == api::kBackendPostgres) return BackendKind::kPostgres;
  return Status::InvalidArgument("spec.kind: \"" + std::string(text) +
                                 "\" is not a kind; use nats, rabbitmq or postgres");
}

nlohmann::json ComputeBackendStatus(const nlohmann::json& previous, const BackendStatusInput& input,
                                    std::string_view now_rfc3339) {
  const nlohmann::json prev = previous.is_object() ? previous : nlohmann::json::object();
  std::vector<Condition> conditions =
      ConditionsFromJson(prev.value("conditions", nlohmann::json::array()));

  const StepResult* failure = nullptr;
  for (const auto& r : input.steps) {
    if (!r.ok) {
      failure = &r;
      break;
    }
  }

  const std::vector<std::string_view> wanted = SubConditions(input.kind);
  // Conditions of another kind (the kind changed) go; foreign types stay.
  std::erase_if(conditions, [&](const Condition& c) {
    const std::array<std::string_view, 4> subs = {ct::kCredentialsReady, ct::kConfigRendered,
                                                  ct::kEnvSecretReady, ct::kProbed};
    return std::find(subs.begin(), subs.end(), c.type) != subs.end() &&
           std::find(wanted.begin(), wanted.end(), c.type) == wanted.end();
  });

  for (std::string_view type : wanted) {
    const StepResult* result = nullptr;
    for (const auto& r : input.steps) {
      if (StepConditionType(r.step) == type) result = &r;
    }
    Condition c{.type = std::string(type), .observed_generation = input.generation};
    if (result != nullptr && result->ok) {
      c.status = "True";
      c.reason = std::string(reasons::kSucceeded);
      c.message = result->message;
    } else if (result != nullptr) {
      c.status = "False";
      c.reason = result->reason;
      c.message = result->message;
    } else {
      c.status = "Unknown";
      c.reason = std::string(reasons::kPending);
      c.message = failure != nullptr
                      ? "waiting for " + std::string(StepName(failure->step)) + " to succeed"
                      : "not run yet";
    }
    SetCondition(conditions, std::move(c), now_rfc3339);
  }

  Condition ready{.type = std::string(ct::kReady), .observed_generation = input.generation};
  if (failure != nullptr) {
    ready.status = "False";
    ready.reason = failure->reason;
    ready.message = failure->message;
  } else {
    ready.status = "True";
    if (!input.ready_reason.empty()) {
      ready.reason = input.ready_reason;
      ready.message = input.ready_message;
    } else if (input.kind == BackendKind::kNats) {
      ready.reason = std::string(reasons::kProbed);
      ready.message = "published and received on " + input.subject + " as user " + input.username +
                      " with the env Secret's credentials";
    } else {
      ready.reason = std::string(reasons::kEnvSecretWritten);
      ready.message = "env Secret " + input.env_secret_name + " written";
    }
  }
  SetCondition(conditions, std::move(ready), now_rfc3339);
  // Ready first, the rest in a stable order: status diffs stay small.
  std::stable_sort(conditions.begin(), conditions.end(),
                   [](const Condition& a, const Condition& b) {
                     return a.type == ct::kReady && b.type != ct::kReady;
                   });

  nlohmann::json status = {{"observedGeneration", input.generation},
                           {"conditions", ToJson(conditions)}};
  auto put = [&](const char* key, const std::string& value) {
    if (!value.empty()) {
      status[key] = value;
    } else if (failure != nullptr && prev.contains(key)) {
      status[key] = prev[key];
    }
  };
  put("envSecretName", input.env_secret_name);
  put("envSecretHash", input.env_secret_hash);
  put("subject", input.subject);
  put("server", input.server);
  put("username", input.username);
  put("lastProbeTime", input.last_probe_time);
  if (input.server_max_payload) {
    status["serverMaxPayload"] = *input.server_max_payload;
  } else if (failure != nullptr && prev.contains("serverMaxPayload")) {
    status["serverMaxPayload"] = prev["serverMaxPayload"];
  }
  if (!input.rotation.is_null()) status["rotation"] = input.rotation;
  if (!input.limits.is_null()) status["limits"] = input.limits;
  if (!input.account.empty()) status["account"] = input.account;
  // Written by the usage collector alone (ShouldWriteConnections); a
  // reconcile keeps it.
  if (prev.contains("connections")) status["connections"] = prev["connections"];
  return status;
}

std::string_view ProbeFailureReason(StatusCode code, bool reload_expected) {
  switch (code) {
    case StatusCode::kUnauthenticated:
      return reload_expected ? reasons::kConfigNotReloaded : reasons::kAuthFailed;
    case StatusCode::kPermissionDenied:
      return reload_expected ? reasons::kConfigNotReloaded : reasons::kPermissionDenied;
    case StatusCode::kFailedPrecondition:
      return reasons::kMaxPayloadTooSmall;
    case StatusCode::kResourceExhausted:
      // Past authentication (or before it, at the server's own limit):
      // nothing a reload or an authorizer changes.
      return reasons::kConnectionLimitReached;
    case StatusCode::kTimeout:
      return reload_expected ? reasons::kConfigNotReloaded : reasons::kServerUnreachable;
    default:
      return reasons::kServerUnreachable;
  }
}

namespace {

// The waiting states: a server that has not loaded its file yet, or
// authorizers that have not seen new credentials yet. No fault, however
// long it lasts (the status says how long): one event policy for both.
bool IsWaitingReason(std::string_view reason) {
  return reason == reasons::kConfigNotReloaded || reason == reasons::kAuthorizerPending;
}

}  // namespace

std::optional<StatusEvent> ReadyTransitionEvent(const nlohmann::json& previous,
                                                const nlohmann::json& next) {
  auto now = ConditionOf(next, ct::kReady);
  if (!now) return std::nullopt;
  auto before = ConditionOf(previous, ct::kReady);
  if (before && before->status == now->status && before->reason == now->reason) {
    return std::nullopt;
  }
  return StatusEvent{now->status != "True" && !IsWaitingReason(now->reason), now->reason,
                     now->message};
}

std::optional<StatusEvent> ConfigFitsEvent(const nlohmann::json& previous,
                                           const nlohmann::json& next) {
  auto now = ConditionOf(next, ct::kConfigFits);
  if (!now) return std::nullopt;
  auto before = ConditionOf(previous, ct::kConfigFits);
  if (before ? before->status == now->status : now->status == "True") return std::nullopt;
  return StatusEvent{now->status != "True", now->reason, now->message};
}

nlohmann::json ComputeServerStatus(const nlohmann::json& previous, const ServerStatusInput& in,
                                   std::string_view now_rfc3339) {
  const nlohmann::json prev = previous.is_object() ? previous : nlohmann::json::object();
  std::vector<Condition> conditions =
      ConditionsFromJson(prev.value("conditions", nlohmann::json::array()));
  Condition ready{.type = std::string(ct::kReady), .observed_generation = in.generation};
  if (in.failure_reason.empty()) {
    ready.status = "True";
    ready.reason = std::string(reasons::kConfigRendered);
    ready.message = std::to_string(in.installations) + " installation(s) rendered";
    if (in.left_out > 0) {
      ready.message += "; " + std::to_string(in.left_out) +
                       " left out (each says why in its status" +
                       (in.left_out_full > 0 ? std::string(", and see ConfigFits") : "") + ")";
    }
  } else {
    ready.status = "False";
    ready.reason = in.failure_reason;
    ready.message = in.failure_message;
  }
  SetCondition(conditions, std::move(ready), now_rfc3339);
  if (in.max_bytes > 0) {
    Condition fits{.type = std::string(ct::kConfigFits), .observed_generation = in.generation};
    const std::string size =
        std::to_string(in.config_bytes) + " of " + std::to_string(in.max_bytes) + " bytes";
    if (in.left_out_full == 0 && in.users_left_out_full == 0) {
      fits.status = "True";
      fits.reason = std::string(reasons::kFits);
      fits.message = "the rendered file takes " + size + " (its Secret's limit)";
    } else {
      fits.status = "False";
      fits.reason = std::string(reasons::kConfigFull);
      fits.message =
          "the rendered file no longer fits its config Secret (at most " +
          std::to_string(in.max_bytes) + " bytes; " + std::to_string(in.reserve_bytes) +
          " of them kept for rotations): " + std::to_string(in.installations) +
          " installation(s) fit in " + std::to_string(in.config_bytes) + " bytes, " +
          std::to_string(in.left_out_full) + " newer one(s) are left out" +
          (in.users_left_out_full > 0
               ? " and " + std::to_string(in.users_left_out_full) + " rotation user(s) wait"
               : std::string()) +
          "; bind some PubSubBackends to another NatsServer";
    }
    SetCondition(conditions, std::move(fits), now_rfc3339);
  }
  std::stable_sort(conditions.begin(), conditions.end(),
                   [](const Condition& a, const Condition& b) {
                     return a.type == ct::kReady && b.type != ct::kReady;
                   });
  nlohmann::json status = {{"observedGeneration", in.generation},
                           {"installations", in.installations},
                           {"conditions", ToJson(conditions)}};
  if (!in.config_hash.empty()) {
    status["configHash"] = in.config_hash;
  } else if (prev.contains("configHash")) {
    status["configHash"] = prev["configHash"];
  }
  return status;
}

}  // namespace switchboard::operator_logic
