#include "switchboard/authorizer/projection.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <string>
#include <string_view>

#include "switchboard/api/limits.h"
#include "switchboard/api/packed.h"
#include "switchboard/common/base64.h"
#include "switchboard/operator_logic/callout.h"
#include "switchboard/operator_logic/cluster_render.h"
#include "switchboard/operator_logic/objects.h"
#include "switchboard/operator_logic/operator_mode_keys.h"
#include "switchboard/operator_logic/rotation.h"

namespace switchboard::authorizer {
namespace {

using nlohmann::json;
namespace state = operator_logic::state_keys;
namespace callout = operator_logic::callout_keys;

// The data keys DecodeState and DecodeCalloutKeys read.
constexpr std::array<std::string_view, 24> kDecodedKeys = {
    state::kUsername,
    state::kPassword,
    state::kBcrypt,
    state::kRotationCount,
    state::kRotationToken,
    state::kRotationPhase,
    state::kPreviousUsername,
    state::kPreviousPassword,
    state::kPreviousBcrypt,
    state::kRetiresAt,
    callout::kIssuerSeed,
    callout::kIssuer,
    callout::kAuthorizerPassword,
    callout::kAuthorizerBcrypt,
    callout::kSystemPassword,
    callout::kSystemBcrypt,
    callout::kCa,
    // operator mode (isolation: Accounts): OperatorModeOf
    operator_logic::operator_mode_keys::kOperatorSeed,
    operator_logic::operator_mode_keys::kSystemAccountSeed,
    operator_logic::operator_mode_keys::kSystemUserSeed,
    operator_logic::operator_mode_keys::kAuthorizerUserSeed,
    operator_logic::operator_mode_keys::kInstallationSigningSeed,
    operator_logic::operator_mode_keys::kSentinelUser,
    operator_logic::operator_mode_keys::kIssuedAt,
};

template <typename Wanted>
void KeepIf(json& obj, Wanted wanted) {
  if (!obj.is_object()) return;
  for (auto it = obj.begin(); it != obj.end();) {
    it = wanted(it.key(), it.value()) ? std::next(it) : obj.erase(it);
  }
}

void KeepOnly(json& obj, std::initializer_list<std::string_view> keep) {
  KeepIf(obj, [&](const std::string& key, const json&) {
    return std::find(keep.begin(), keep.end(), key) != keep.end();
  });
}

json* Member(json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

// Drops an object member that ends up empty, so that an absent and an
// emptied member read alike.
void DropIfEmpty(json& obj, std::string_view key) {
  json* m = Member(obj, key);
  if (m != nullptr && m->is_object() && m->empty()) obj.erase(obj.find(key));
}

bool Decodes(const json& value) {
  if (!value.is_string()) return false;
  std::string ignored;
  return base64::Decode(value.get_ref<const std::string&>(), &ignored);
}

// Only a credentials Secret's label, annotations and owners are read
// (SelectBackends); the callout Secret is read for its data alone.
bool IsCredentialsSecretName(const json& meta) {
  auto name = meta.find("name");
  if (name == meta.end() || !name->is_string()) return false;
  return name->get_ref<const std::string&>().ends_with(api::kCredentialsSecretSuffix);
}

}  // namespace

void ProjectBackend(json& backend) {
  KeepOnly(backend, {"metadata", "spec"});
  if (json* meta = Member(backend, "metadata")) {
    KeepOnly(*meta, {"name", "namespace", "uid", "resourceVersion", "creationTimestamp",
                     "deletionTimestamp"});
  }
  json* spec = Member(backend, "spec");
  if (spec == nullptr) return;
  KeepOnly(*spec, {"kind", "nats"});
  json* nats = Member(*spec, "nats");
  if (nats == nullptr) return;
  KeepOnly(*nats, {"serverRef", "subjectPrefix"});
  if (json* ref = Member(*nats, "serverRef")) KeepOnly(*ref, {"name", "namespace"});
}

void ProjectServer(json& server) {
  KeepOnly(server, {"metadata", "spec"});
  if (json* meta = Member(server, "metadata")) {
    KeepOnly(*meta, {"name", "namespace", "uid", "resourceVersion"});
  }
}

void ProjectSecret(json& secret) {
  KeepOnly(secret, {"metadata", "data"});
  json* meta = Member(secret, "metadata");
  if (meta != nullptr && !IsCredentialsSecretName(*meta)) {
    KeepOnly(*meta, {"name", "namespace", "resourceVersion"});
  } else if (meta != nullptr) {
    KeepOnly(*meta,
             {"name", "namespace", "resourceVersion", "labels", "annotations", "ownerReferences"});
    if (json* labels = Member(*meta, "labels")) {
      KeepOnly(*labels, {operator_logic::kManagedByLabel});
    }
    if (json* annotations = Member(*meta, "annotations")) {
      KeepOnly(*annotations, {operator_logic::kSecretConflictAnnotation});
    }
    DropIfEmpty(*meta, "labels");
    DropIfEmpty(*meta, "annotations");
    if (json* refs = Member(*meta, "ownerReferences"); refs != nullptr && refs->is_array()) {
      for (json& ref : *refs) KeepOnly(ref, {"uid"});
    }
  }
  json* data = Member(secret, "data");
  if (data == nullptr || !data->is_object()) return;
  KeepIf(*data, [](const std::string& key, const json& value) {
    return std::find(kDecodedKeys.begin(), kDecodedKeys.end(), key) != kDecodedKeys.end() ||
           !Decodes(value);
  });
  if (data->empty()) {
    secret.erase("data");
  } else {
    *data = api::Pack(*data);
  }
}

kube::FieldMask BackendFields() {
  return kube::FieldMask::Keep({{"metadata", "name"},
                                {"metadata", "namespace"},
                                {"metadata", "uid"},
                                {"metadata", "resourceVersion"},
                                {"metadata", "creationTimestamp"},
                                {"metadata", "deletionTimestamp"},
                                {"spec", "kind"},
                                {"spec", "nats", "serverRef", "name"},
                                {"spec", "nats", "serverRef", "namespace"},
                                {"spec", "nats", "subjectPrefix"}});
}

kube::FieldMask ServerFields() {
  return kube::FieldMask::Keep({{"metadata", "name"},
                                {"metadata", "namespace"},
                                {"metadata", "uid"},
                                {"metadata", "resourceVersion"},
                                {"spec"}});
}

kube::FieldMask SecretFields() {
  return kube::FieldMask::Keep(
      {{"metadata", "name"},
       {"metadata", "namespace"},
       {"metadata", "resourceVersion"},
       {"metadata", "labels", std::string(operator_logic::kManagedByLabel)},
       {"metadata", "annotations", std::string(operator_logic::kSecretConflictAnnotation)},
       {"metadata", "ownerReferences", "uid"},
       {"data"}});
}

}  // namespace switchboard::authorizer
