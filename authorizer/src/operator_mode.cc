#include "switchboard/authorizer/operator_mode.h"

#include <ctime>

namespace switchboard::authorizer {

namespace logic = operator_logic;

OperatorMode::OperatorMode(logic::OperatorModeKeyPairs k)
    : keys(std::move(k)),
      signer(keys.installation_signing, [this](const logic::AuthorizationDecision& d) {
        auto account = logic::InstallationAccountKey(keys.installation_signing, d.ns, d.name);
        return account.ok() ? account->public_key() : std::string();
      }) {}

Result<std::shared_ptr<const OperatorMode>> OperatorModeOf(const logic::OperatorModeSeeds& seeds,
                                                           std::string_view issuer_seed) {
  auto keys = logic::DecodeOperatorModeKeyPairs(seeds, issuer_seed);
  if (!keys.ok()) return Status::FailedPrecondition(keys.status().message());
  return std::shared_ptr<const OperatorMode>(std::make_shared<OperatorMode>(std::move(*keys)));
}

Status UseOperatorModeUser(pubsub::NatsOptions& options, const OperatorMode& mode, bool system) {
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  auto jwt =
      system ? logic::SystemUserJwt(mode.keys, now) : logic::AuthorizerUserJwt(mode.keys, now);
  if (!jwt.ok()) return jwt.status();
  const natsauth::KeyPair& user = system ? mode.keys.system_user : mode.keys.authorizer_user;
  options.username.clear();
  options.password.clear();
  // The key pair lives as long as the ServedServer snapshot that holds
  // `mode`; the connection may outlive that snapshot, so it signs with a
  // copy of its own.
  auto own = std::make_shared<natsauth::KeyPair>(
      std::move(natsauth::KeyPair::FromSeed(user.Seed()).value()));
  options.user_jwt = std::make_shared<pubsub::UserJwtCredentials>(
      pubsub::UserJwtCredentials{*jwt, [own](std::string_view nonce) { return own->Sign(nonce); }});
  return Status::Ok();
}

}  // namespace switchboard::authorizer
