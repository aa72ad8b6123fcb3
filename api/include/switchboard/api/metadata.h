// Reading metadata of any Kubernetes object (JSON of unknown shape): the one
// set of accessors the rules, the operator (controller and logic), the kube
// client and the CLI use. Never throws: a missing member, or one of the
// wrong type, reads as empty (false, 0).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace switchboard::api {

std::string NameOf(const nlohmann::json& object);
std::string NamespaceOf(const nlohmann::json& object);
std::string KindOf(const nlohmann::json& object);  // the top-level kind
std::string UidOf(const nlohmann::json& object);
std::string ResourceVersionOf(const nlohmann::json& object);
int64_t GenerationOf(const nlohmann::json& object);
// metadata.deletionTimestamp is set (not null).
bool IsDeleting(const nlohmann::json& object);
bool HasFinalizer(const nlohmann::json& object, std::string_view finalizer);
bool HasAnnotation(const nlohmann::json& object, std::string_view key);
// The annotation's value; "" when absent or not a string.
std::string Annotation(const nlohmann::json& object, std::string_view key);

}  // namespace switchboard::api
