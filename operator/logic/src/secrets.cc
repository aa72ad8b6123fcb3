#include "switchboard/operator_logic/secrets.h"

#include "switchboard/api/names.h"
#include "switchboard/operator_logic/objects.h"

namespace switchboard::operator_logic {

nlohmann::json EnvSecret(const OwnerObject& backend, std::string_view secret_name,
                         const SecretData& env) {
  SecretSpec spec;
  spec.ns = backend.ns;
  spec.name = std::string(secret_name);
  spec.data = env;
  spec.labels = {{std::string(kBackendLabel), backend.name}};
  spec.annotations = {{std::string(kContentHashAnnotation), EnvHash(env)}};
  spec.owner = OwnerRef{.kind = "PubSubBackend", .name = backend.name, .uid = backend.uid};
  return BuildSecret(spec);
}

nlohmann::json CredentialsSecret(const OwnerObject& backend, const CredentialState& state) {
  SecretSpec spec;
  spec.ns = backend.ns;
  spec.name = api::DefaultCredentialsSecretName(backend.name);
  spec.data = EncodeState(state);
  spec.labels = {{std::string(kBackendLabel), backend.name}};
  spec.owner = OwnerRef{.kind = "PubSubBackend", .name = backend.name, .uid = backend.uid};
  return BuildSecret(spec);
}

nlohmann::json ConfigSecret(const OwnerObject& server, std::string_view secret_name,
                            std::string_view key, const RenderedConfig& config) {
  SecretSpec spec;
  spec.ns = server.ns;
  spec.name = std::string(secret_name);
  spec.data = {{std::string(key), config.text}};
  spec.labels = {{std::string(kServerLabel), server.name}};
  spec.annotations = {{std::string(kContentHashAnnotation), config.hash}};
  spec.owner = OwnerRef{.kind = "NatsServer", .name = server.name, .uid = server.uid};
  return BuildSecret(spec);
}

}  // namespace switchboard::operator_logic
