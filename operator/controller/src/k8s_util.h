// Reading object metadata from Kubernetes JSON (what every reconcile step
// asks of an object besides its spec, which api::BackendView and
// api::NatsServerView read). Pure.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace switchboard::operator_controller {

using json = nlohmann::json;

bool HasFinalizer(const json& obj, std::string_view finalizer);
bool IsDeleting(const json& obj);
int64_t GenerationOf(const json& obj);
std::string UidOf(const json& obj);
std::string Annotation(const json& obj, std::string_view key);
// obj.status, or an empty object.
json StatusOf(const json& obj);

}  // namespace switchboard::operator_controller
