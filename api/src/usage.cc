#include "switchboard/api/usage.h"

#include "switchboard/api/json_fields.h"

namespace switchboard::api {

std::string UsageSystemSecretName(std::string_view server_name) {
  return std::string(server_name) + std::string(kUsageSystemSecretSuffix);
}

bool UsageSystemUser(const NatsServerView& server) {
  const auto* v = Path(server.json(), {"spec", "usage", "systemUser"});
  return v != nullptr && v->is_boolean() && v->get<bool>();
}

bool WritesUsageSystemSecret(const NatsServerView& server) {
  return UsageSystemUser(server) && !server.auth_callout();
}

}  // namespace switchboard::api
