// The three Secrets the operator writes, as server-side-apply JSON with
// consistent names, labels and owners (objects.h BuildSecret). Pure.
//
//   kind          name (namespace)                 owner          data
//   env           spec.output.secretName (backend) PubSubBackend  EnvData (nats/rabbitmq/postgres)
//   credentials   <backend>-nats-credentials       PubSubBackend  EncodeState(CredentialState)
//   config        spec.config.secretName (server)  NatsServer     {<key>: rendered include file}
//
// Each carries an annotation with the hash of its content, so a reader (or a
// pod template) can tell the version without decoding data.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "switchboard/operator_logic/env.h"
#include "switchboard/operator_logic/render.h"
#include "switchboard/operator_logic/rotation.h"

namespace switchboard::operator_logic {

// Annotation with EnvHash(data) on the env Secret, and with the config hash
// on the config Secret.
inline constexpr std::string_view kContentHashAnnotation = "pubsub.switchboard.dev/content-hash";

struct OwnerObject {
  std::string ns;
  std::string name;
  std::string uid;
};

nlohmann::json EnvSecret(const OwnerObject& backend, std::string_view secret_name,
                         const SecretData& env);

nlohmann::json CredentialsSecret(const OwnerObject& backend, const CredentialState& state);

nlohmann::json ConfigSecret(const OwnerObject& server, std::string_view secret_name,
                            std::string_view key, const RenderedConfig& config);

}  // namespace switchboard::operator_logic
