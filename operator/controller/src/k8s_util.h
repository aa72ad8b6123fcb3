// Small helpers over Kubernetes JSON shared by the reconcilers: conditions,
// owner references, Secret data (base64), time stamps, hashes. Pure.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace switchboard::controller {

using json = nlohmann::json;
using SecretData = std::map<std::string, std::string>;  // decoded key -> value

inline constexpr const char* kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr const char* kManagedByValue = "switchboard";
inline constexpr const char* kFinalizer = "pubsub.switchboard.dev/finalizer";
inline constexpr const char* kRotateAnnotation = "pubsub.switchboard.dev/rotate-password";
inline constexpr const char* kRotationAckAnnotation =
    "pubsub.switchboard.dev/rotation-acknowledged";

// RFC 3339 UTC, seconds precision (metav1.Time).
std::string NowRfc3339();
std::string FormatRfc3339(std::chrono::system_clock::time_point t);
// Parses what FormatRfc3339 writes (and fractional seconds); false on garbage.
bool ParseRfc3339(std::string_view text, std::chrono::system_clock::time_point* out);

// A condition as the API wants it.
json Condition(std::string_view type, bool status, std::string_view reason,
               std::string_view message, int64_t generation);
// Replaces (or appends) `cond` in `conditions` (an array), keeping the old
// lastTransitionTime when the status did not change; new ones get now.
void SetCondition(json* conditions, json cond);
// The condition of `type` in obj.status.conditions, or null.
const json* FindCondition(const json& obj, std::string_view type);

// ownerReference pointing at `owner` (controller=true, blockOwnerDeletion).
json OwnerReference(const json& owner);
// True when `obj` has an ownerReference to the object with this uid.
bool IsOwnedBy(const json& obj, std::string_view owner_uid);
// True when obj carries the managed-by=switchboard label.
bool IsManagedBySwitchboard(const json& obj);

// Decodes a Secret's .data (base64). Values that do not decode are skipped.
SecretData DecodeSecretData(const json& secret);
json EncodeSecretData(const SecretData& data);

// "sha256:<hex>".
std::string Sha256Tagged(std::string_view data);

bool HasFinalizer(const json& obj, std::string_view finalizer);
bool IsDeleting(const json& obj);
int64_t GenerationOf(const json& obj);
std::string Annotation(const json& obj, std::string_view key);

}  // namespace switchboard::controller
