// apiVersion and metadata: the names Kubernetes and Switchboard derive from.
#include "rules.h"
#include "switchboard/api/constants.h"
#include "switchboard/api/json_fields.h"
#include "switchboard/api/names.h"
#include "switchboard/api/usage.h"
#include "switchboard/api/views.h"

namespace switchboard::rules::internal {

void CheckMetadata(const nlohmann::json& object, Sink& sink) {
  auto api_version = api::String(api::Field(object, "apiVersion"));
  if (!api_version) {
    if (!api::Field(object, "apiVersion")) {
      sink.Error("api-version", "apiVersion",
                 "required; set apiVersion: " + std::string(api::kApiVersion));
    }
  } else if (*api_version != api::kApiVersion) {
    sink.Error("api-version", "apiVersion",
               Quote(*api_version) + " is not served; use " + std::string(api::kApiVersion));
  }

  const auto* metadata = api::Field(object, "metadata");
  if (metadata == nullptr || !metadata->is_object()) {
    sink.Error("required", "metadata.name", "required; give the object a name");
    return;
  }
  auto name = api::String(api::Field(metadata, "name"));
  auto generate = api::String(api::Field(metadata, "generateName"));
  if (!name || name->empty()) {
    if (!generate || generate->empty()) {
      sink.Error("required", "metadata.name", "required; give the object a name");
    }
  } else if (std::string err = api::CheckDnsSubdomain(*name); !err.empty()) {
    sink.Error("name", "metadata.name", Quote(*name) + " " + err);
  } else if (api::KindOf(object) == api::kKindBackend &&
             name->size() > api::kMaxBackendNameLength) {
    sink.Error("name", "metadata.name",
               "must be at most " + std::to_string(api::kMaxBackendNameLength) +
                   " characters so that the derived Secret names (<name>" +
                   std::string(api::kCredentialsSecretSuffix) + ") stay within " +
                   std::to_string(api::kMaxDnsSubdomainLength) + "; use a shorter name");
  }
  if (name && api::KindOf(object) == api::kKindServer && name->size() > api::kMaxServerNameLength &&
      api::IsDnsSubdomain(*name)) {
    sink.Error("name", "metadata.name",
               "must be at most " + std::to_string(api::kMaxServerNameLength) +
                   " characters so that the Secrets named after it (<name>" +
                   std::string(api::kConfigSecretSuffix) + ", <name>" +
                   std::string(api::kCalloutSecretSuffix) + ") stay within " +
                   std::to_string(api::kMaxDnsSubdomainLength) + "; use a shorter name");
  }
  if (name && api::KindOf(object) == api::kKindServer &&
      name->size() > api::kMaxUsageSystemServerNameLength &&
      name->size() <= api::kMaxServerNameLength && api::IsDnsSubdomain(*name) &&
      api::UsageSystemUser(api::NatsServerView(object))) {
    sink.Error("name", "metadata.name",
               "must be at most " + std::to_string(api::kMaxUsageSystemServerNameLength) +
                   " characters with spec.usage.systemUser: true so that its Secret (<name>" +
                   std::string(api::kUsageSystemSecretSuffix) + ") stays within " +
                   std::to_string(api::kMaxDnsSubdomainLength) +
                   "; use a shorter name or turn spec.usage.systemUser off");
  }
  auto ns = api::String(api::Field(metadata, "namespace"));
  if (ns && !ns->empty()) {
    if (std::string err = api::CheckDnsLabel(*ns); !err.empty()) {
      sink.Error("name", "metadata.namespace", Quote(*ns) + " " + err);
    }
  }
}

}  // namespace switchboard::rules::internal
