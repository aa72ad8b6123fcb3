#include "switchboard/operator/objects.h"

#include <array>

namespace switchboard::operator_logic {
namespace {

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int B64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

std::string DefaultEnvSecretName(std::string_view backend_name) {
  return std::string(backend_name) + "-pubsub-env";
}
std::string CredentialsSecretName(std::string_view backend_name) {
  return std::string(backend_name) + "-nats-credentials";
}
std::string DefaultConfigSecretName(std::string_view server_name) {
  return std::string(server_name) + "-switchboard";
}
std::string DefaultUsername(std::string_view ns, std::string_view name) {
  return std::string(ns) + "-" + std::string(name);
}

std::string Base64Encode(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  auto byte = [&](size_t k) { return static_cast<uint32_t>(static_cast<unsigned char>(in[k])); };
  for (; i + 3 <= in.size(); i += 3) {
    uint32_t v = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
    out.push_back(kB64[(v >> 18) & 63]);
    out.push_back(kB64[(v >> 12) & 63]);
    out.push_back(kB64[(v >> 6) & 63]);
    out.push_back(kB64[v & 63]);
  }
  size_t rest = in.size() - i;
  if (rest > 0) {
    uint32_t v = byte(i) << 16;
    if (rest == 2) v |= byte(i + 1) << 8;
    out.push_back(kB64[(v >> 18) & 63]);
    out.push_back(kB64[(v >> 12) & 63]);
    out.push_back(rest == 2 ? kB64[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

Result<std::string> Base64Decode(std::string_view in) {
  if (in.size() % 4 != 0) {
    return Status::InvalidArgument("not base64: length is not a multiple of 4");
  }
  std::string out;
  out.reserve(in.size() / 4 * 3);
  for (size_t i = 0; i < in.size(); i += 4) {
    std::array<int, 4> v{};
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      char c = in[i + k];
      if (c == '=' && i + 4 == in.size() && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad > 0 || (v[k] = B64Value(c)) < 0) {
        return Status::InvalidArgument("not base64: bad character at offset " +
                                       std::to_string(i + k));
      }
    }
    uint32_t n = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out.push_back(static_cast<char>((n >> 16) & 0xff));
    if (pad < 2) out.push_back(static_cast<char>((n >> 8) & 0xff));
    if (pad < 1) out.push_back(static_cast<char>(n & 0xff));
  }
  return out;
}

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
  for (const auto& [k, v] : spec.data) data[k] = Base64Encode(v);
  return {{"apiVersion", "v1"},
          {"kind", "Secret"},
          {"metadata", metadata},
          {"type", "Opaque"},
          {"data", data}};
}

Result<SecretData> DecodeSecretData(const nlohmann::json& secret) {
  SecretData out;
  if (!secret.is_object()) return out;
  if (auto it = secret.find("data"); it != secret.end() && it->is_object()) {
    for (const auto& [k, v] : it->items()) {
      if (!v.is_string()) return Status::InvalidArgument("data." + k + ": not a string");
      auto decoded = Base64Decode(v.get_ref<const std::string&>());
      if (!decoded.ok()) return decoded.status().Annotate("data." + k);
      out[k] = std::move(decoded).value();
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
