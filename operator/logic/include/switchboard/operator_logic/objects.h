// Kubernetes objects the operator writes, built as JSON for create and merge
// patch, and the ownership rule for objects it finds. Pure.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "switchboard/api/constants.h"
#include "switchboard/common/status.h"
#include "switchboard/operator_logic/env.h"

namespace switchboard::operator_logic {

inline constexpr std::string_view kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr std::string_view kManagedByValue = "switchboard";
// Which PubSubBackend / NatsServer a Secret belongs to (name; for lookups).
inline constexpr std::string_view kBackendLabel = "pubsub.switchboard.dev/backend";
inline constexpr std::string_view kServerLabel = "pubsub.switchboard.dev/server";
// The finalizer on PubSubBackends.
inline constexpr std::string_view kFinalizer = "pubsub.switchboard.dev/cleanup";

struct OwnerRef {
  std::string api_version = std::string(api::kApiVersion);
  std::string kind;  // "PubSubBackend" | "NatsServer"
  std::string name;
  std::string uid;
};

struct SecretSpec {
  std::string ns;
  std::string name;
  SecretData data;                            // plaintext; base64-encoded into .data
  std::map<std::string, std::string> labels;  // managed-by is always added
  std::map<std::string, std::string> annotations;
  std::optional<OwnerRef> owner;  // controller=true, blockOwnerDeletion=true
};

// {"apiVersion":"v1","kind":"Secret","metadata":{name,namespace,labels,
// [annotations],[ownerReferences]},"type":"Opaque","data":{k: base64}}.
// Deterministic (keys sorted).
nlohmann::json BuildSecret(const SecretSpec& spec);

// A Secret object's .data decoded (stringData is merged over it, as the API
// server would). kInvalidArgument naming the key whose value is not
// base64, or when .data is not an object.
Result<SecretData> DecodeSecretData(const nlohmann::json& secret);

enum class Ownership {
  kAbsent,  // no such object: the operator may create it
  kOwned,   // managed-by=switchboard and an ownerReference with the owner's uid
  kForeign  // exists but not ours: never overwrite; report SecretConflict
};

// `object` is null (absent) or the object as read from the API server.
Ownership CheckOwnership(const nlohmann::json& object, std::string_view owner_uid);

// Message for a SecretConflict condition/event naming the Secret and the fix.
std::string ForeignSecretMessage(std::string_view ns, std::string_view name);

}  // namespace switchboard::operator_logic
