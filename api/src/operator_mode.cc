#include "switchboard/api/operator_mode.h"

#include "switchboard/api/constants.h"

namespace switchboard::api {

bool OperatorMode(const NatsServerView& server) {
  return server.auth_callout() && server.isolation() == kIsolationAccounts;
}

std::string ResolverDirOf(const NatsServerView& server) {
  const auto& spec = server.json().value("spec", nlohmann::json::object());
  const auto& prov = spec.value("provisioning", nlohmann::json::object());
  const auto& block = prov.value("authCallout", nlohmann::json::object());
  auto it = block.find("resolverDir");
  if (it != block.end() && it->is_string() && !it->get<std::string>().empty()) {
    return it->get<std::string>();
  }
  return std::string(kDefaultResolverDir);
}

}  // namespace switchboard::api
