#include "switchboard/operator_logic/objects.h"

#include "switchboard/common/base64.h"

namespace switchboard::operator_logic {

nlohmann::json BuildSecret(const SecretSpec& spec) {
  nlohmann::json labels = nlohmann::json::object();
  for (const auto& [k, v] : spec.labels) labels[k] = v;
  labels[std::string(kManagedByLabel)] = std::string(kManagedByValue);

  nlohmann::json metadata = {{"name", spec.name}, {"namespace", spec.ns}, {"labels", labels}};
  if (!spec.annotations.empty()) {
    nlohmann::json annotations = nlohmann::json::object();
    for (const auto& [k, v] : spec.annotations) annotations[k] = v;
    metadata["annotations"] = annotations;
  }
  if (spec.owner) {
    metadata["ownerReferences"] = nlohmann::json::array({{
        {"apiVersion", spec.owner->api_version},
        {"kind", spec.owner->kind},
        {"name", spec.owner->name},
        {"uid", spec.owner->uid},
        {"controller", true},
        {"blockOwnerDeletion", true},
    }});
  }
  nlohmann::json data = nlohmann::json::object();
  for (const auto& [k, v] : spec.data) data[k] = base64::Encode(v);
  return {{"apiVersion", "v1"},
          {"kind", "Secret"},
          {"metadata", metadata},
          {"type", "Opaque"},
          {"data", data}};
}

Result<SecretData> DecodeSecretData(const nlohmann::json& secret) {
  SecretData out;
  if (!secret.is_object()) return out;
  if (auto data = secret.find("data"); data != secret.end() && !data->is_null()) {
    if (!data->is_object()) return Status::InvalidArgument("data: not a JSON object");
    for (const auto& [k, v] : data->items()) {
      if (!v.is_string()) return Status::InvalidArgument("data." + k + ": not a string");
      auto decoded = base64::Decode(std::string_view(v.get_ref<const std::string&>()));
      if (!decoded) {
        return Status::InvalidArgument("data." + k +
                                       ": not base64: use the standard alphabet with padding");
      }
      out[k] = std::move(*decoded);
    }
  }
  if (auto it = secret.find("stringData"); it != secret.end() && it->is_object()) {
    for (const auto& [k, v] : it->items()) {
      if (v.is_string()) out[k] = v.get<std::string>();
    }
  }
  return out;
}

Ownership CheckOwnership(const nlohmann::json& object, std::string_view owner_uid) {
  if (!object.is_object()) return Ownership::kAbsent;
  const nlohmann::json* metadata = object.contains("metadata") ? &object["metadata"] : nullptr;
  if (metadata == nullptr || !metadata->is_object()) return Ownership::kForeign;
  bool labelled = false;
  if (auto it = metadata->find("labels"); it != metadata->end() && it->is_object()) {
    auto l = it->find(std::string(kManagedByLabel));
    labelled =
        l != it->end() && l->is_string() && l->get_ref<const std::string&>() == kManagedByValue;
  }
  if (!labelled || owner_uid.empty()) return Ownership::kForeign;
  if (auto it = metadata->find("ownerReferences"); it != metadata->end() && it->is_array()) {
    for (const auto& ref : *it) {
      if (!ref.is_object()) continue;
      auto uid = ref.find("uid");
      if (uid != ref.end() && uid->is_string() && uid->get_ref<const std::string&>() == owner_uid) {
        return Ownership::kOwned;
      }
    }
  }
  return Ownership::kForeign;
}

std::string ForeignSecretMessage(std::string_view ns, std::string_view name) {
  return "Secret " + std::string(ns) + "/" + std::string(name) +
         " exists and is not managed by switchboard (no label " + std::string(kManagedByLabel) +
         "=switchboard with an ownerReference to this object); switchboard will not overwrite "
         "it: delete it, or choose another name in the spec";
}

}  // namespace switchboard::operator_logic
