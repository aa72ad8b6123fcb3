#include "switchboard/testing/callout_config.h"

#include "switchboard/operator_logic/callout.h"
#include "switchboard/operator_logic/credentials.h"

namespace switchboard::testing {

Result<std::string> CalloutConfig(const CalloutConfigParams& params) {
  namespace logic = operator_logic;
  constexpr int kLowestCost = 4;
  auto authorizer = logic::BcryptHash(params.authorizer_password, kLowestCost);
  if (!authorizer.ok()) return authorizer.status();
  auto system = logic::BcryptHash(params.system_password, kLowestCost);
  if (!system.ok()) return system.status();
  return logic::RenderCalloutConfig({.server_ns = params.server_ns,
                                     .server_name = params.server_name,
                                     .issuer = params.issuer,
                                     .authorizer_bcrypt = *authorizer,
                                     .system_bcrypt = *system});
}

}  // namespace switchboard::testing
