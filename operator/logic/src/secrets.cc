#include "switchboard/operator_logic/secrets.h"

#include <map>

#include "switchboard/api/names.h"
#include "switchboard/operator_logic/objects.h"

namespace switchboard::operator_logic {
namespace {

// The owner's name as a label, when it fits a label value (at most 63
// characters; object names may be longer): the API server refuses the
// whole Secret otherwise. The ownerReference always names the owner.
std::map<std::string, std::string> NameLabel(std::string_view key, const std::string& name) {
  if (name.size() > 63) return {};
  return {{std::string(key), name}};
}

}  // namespace

nlohmann::json EnvSecret(const OwnerObject& backend, std::string_view secret_name,
                         const SecretData& env) {
  SecretSpec spec;
  spec.ns = backend.ns;
  spec.name = std::string(secret_name);
  spec.data = env;
  spec.labels = NameLabel(kBackendLabel, backend.name);
  spec.annotations = {{std::string(kContentHashAnnotation), EnvHash(env)}};
  spec.owner = OwnerRef{.kind = "PubSubBackend", .name = backend.name, .uid = backend.uid};
  return BuildSecret(spec);
}

nlohmann::json CredentialsSecret(const OwnerObject& backend, const CredentialState& state) {
  SecretSpec spec;
  spec.ns = backend.ns;
  spec.name = api::DefaultCredentialsSecretName(backend.name);
  spec.data = EncodeState(state);
  spec.labels = NameLabel(kBackendLabel, backend.name);
  spec.owner = OwnerRef{.kind = "PubSubBackend", .name = backend.name, .uid = backend.uid};
  return BuildSecret(spec);
}

nlohmann::json ConfigSecret(const OwnerObject& server, std::string_view secret_name,
                            std::string_view key, const RenderedConfig& config) {
  SecretSpec spec;
  spec.ns = server.ns;
  spec.name = std::string(secret_name);
  spec.data = {{std::string(key), config.text}};
  spec.labels = NameLabel(kServerLabel, server.name);
  spec.annotations = {{std::string(kContentHashAnnotation), config.hash}};
  spec.owner = OwnerRef{.kind = "NatsServer", .name = server.name, .uid = server.uid};
  return BuildSecret(spec);
}

nlohmann::json CalloutSecret(const OwnerObject& server, std::string_view secret_name,
                             const SecretData& keys) {
  SecretSpec spec;
  spec.ns = server.ns;
  spec.name = std::string(secret_name);
  spec.data = keys;
  spec.labels = NameLabel(kServerLabel, server.name);
  spec.owner = OwnerRef{.kind = "NatsServer", .name = server.name, .uid = server.uid};
  return BuildSecret(spec);
}

}  // namespace switchboard::operator_logic
