// The four Secrets the operator writes (env, credentials, config, callout), as whole desired
// objects with consistent names, labels and owners (objects.h BuildSecret); the controller compares
// them with what is stored and merge-patches the difference (operator/README.md says why not
// server-side apply). Pure.
//
//   kind          name (namespace)                 owner          data
//   env           spec.output.secretName (backend) PubSubBackend  EnvData (nats/rabbitmq/postgres)
//   credentials   <backend>-nats-credentials       PubSubBackend  EncodeState(CredentialState)
//   config        spec.config.secretName (server)  NatsServer     {<key>: rendered include file}
//   callout       spec.provisioning.authCallout    NatsServer     EncodeCalloutKeys (callout.h)
//                 .secretName (server)
//
// The env and config Secrets carry kContentHashAnnotation with the hash of
// their content, so a reader can tell the version without decoding data
// (the credentials Secret has none: its content is the state itself).
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

// AuthCallout mode's keys (`keys` is EncodeCalloutKeys' data: the issuer
// seed and the authorizer's and system user's passwords). No hash
// annotation: nothing reads its version.
nlohmann::json CalloutSecret(const OwnerObject& server, std::string_view secret_name,
                             const SecretData& keys);

}  // namespace switchboard::operator_logic
