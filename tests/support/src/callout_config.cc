#include "switchboard/testing/callout_config.h"

#include "switchboard/operator_logic/callout.h"
#include "switchboard/operator_logic/credentials.h"
#include "switchboard/operator_logic/operator_mode_config.h"

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

Result<std::string> OperatorModeConfig(const operator_logic::OperatorModeKeyPairs& keys,
                                       std::string resolver_dir, int64_t now) {
  auto jwts = operator_logic::EncodeOperatorModeJwts(keys);
  if (!jwts.ok()) return jwts.status();
  operator_logic::OperatorModeConfigInput in;
  in.server_ns = "nats";
  in.server_name = "main";
  in.operator_jwt = jwts->operator_jwt;
  in.system_account_jwt = jwts->system_account_jwt;
  in.auth_account_jwt = jwts->auth_account_jwt;
  in.sentinel_jwt = jwts->sentinel_jwt;
  in.resolver_dir = std::move(resolver_dir);
  in.now = now;
  return operator_logic::RenderOperatorModeConfig(in);
}

}  // namespace switchboard::testing
