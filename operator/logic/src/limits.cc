#include "switchboard/operator_logic/limits.h"

#include <algorithm>
#include <optional>

#include "switchboard/api/constants.h"
#include "switchboard/api/values.h"

namespace switchboard::operator_logic {
namespace {

std::optional<int64_t> Pick(const std::optional<int64_t>& backend,
                            const std::optional<int64_t>& server_default, bool raise_allowed) {
  if (!backend) return server_default;
  if (server_default && !raise_allowed) return std::min(*backend, *server_default);
  return backend;
}

}  // namespace

LimitsPolicy LimitsPolicyOf(const api::NatsServerView& server) {
  LimitsPolicy p;
  p.defaults = server.installation_limits();
  p.raise_allowed = server.limits_raise_allowed();
  p.server_max_payload = server.max_payload().value_or(api::kEngineMaxPayload);
  return p;
}

InstallationLimits EffectiveLimits(const InstallationLimits& backend, const LimitsPolicy& server) {
  InstallationLimits out;
  out.max_connections =
      Pick(backend.max_connections, server.defaults.max_connections, server.raise_allowed);
  out.max_subscriptions =
      Pick(backend.max_subscriptions, server.defaults.max_subscriptions, server.raise_allowed);
  out.max_payload = Pick(backend.max_payload, server.defaults.max_payload, server.raise_allowed);
  if (out.max_payload) out.max_payload = std::min(*out.max_payload, server.server_max_payload);
  return out;
}

InstallationLimits InstallationLimitsOf(const api::BackendView& backend,
                                        const api::NatsServerView& server) {
  if (server.isolation() != api::kIsolationAccounts) return {};
  return EffectiveLimits(backend.limits(), LimitsPolicyOf(server));
}

LimitsProblem CheckLimits(const InstallationLimits& limits) {
  if (limits.max_connections) {
    if (auto why = api::CheckMaxConnections(*limits.max_connections); !why.empty()) {
      return {"maxConnections", why};
    }
  }
  if (limits.max_subscriptions) {
    if (auto why = api::CheckMaxSubscriptions(*limits.max_subscriptions); !why.empty()) {
      return {"maxSubscriptions", why};
    }
  }
  if (limits.max_payload) {
    if (auto why = api::CheckMaxPayload(*limits.max_payload); !why.empty()) {
      return {"maxPayload", why};
    }
  }
  return {};
}

nlohmann::json LimitsStatus(const InstallationLimits& limits) {
  if (limits.empty()) return nullptr;
  nlohmann::json out = nlohmann::json::object();
  if (limits.max_connections) out["maxConnections"] = *limits.max_connections;
  if (limits.max_subscriptions) out["maxSubscriptions"] = *limits.max_subscriptions;
  if (limits.max_payload) out["maxPayload"] = *limits.max_payload;
  return out;
}

}  // namespace switchboard::operator_logic
