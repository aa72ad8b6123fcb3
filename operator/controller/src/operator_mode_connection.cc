#include "operator_mode_connection.h"

#include <memory>

namespace switchboard::operator_controller {

Result<pubsub::NatsOptions> OperatorModeSystemConnection(
    const std::string& urls, const std::string& ca_file,
    const operator_logic::OperatorModeKeyPairs& keys, int64_t now) {
  auto jwt = operator_logic::SystemUserJwt(keys, now);
  if (!jwt.ok()) return jwt.status();
  auto own = natsauth::KeyPair::FromSeed(keys.system_user.Seed());
  if (!own.ok()) return own.status();
  auto signer = std::make_shared<natsauth::KeyPair>(std::move(own).value());
  pubsub::NatsOptions o;
  o.urls = urls;
  o.ca_file = ca_file;
  o.user_jwt = std::make_shared<pubsub::UserJwtCredentials>(pubsub::UserJwtCredentials{
      *jwt, [signer](std::string_view nonce) { return signer->Sign(nonce); }});
  return o;
}

}  // namespace switchboard::operator_controller
