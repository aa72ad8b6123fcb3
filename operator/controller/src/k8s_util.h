// Reading object metadata from Kubernetes JSON (what every reconcile step
// asks of an object besides its spec, which api::BackendView and
// api::NatsServerView read). Pure.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "switchboard/api/metadata.h"

namespace switchboard::operator_controller {

using json = nlohmann::json;

// The one set of metadata accessors (api/metadata.h).
using api::Annotation;
using api::GenerationOf;
using api::HasFinalizer;
using api::IsDeleting;
using api::UidOf;
// obj.status, or an empty object.
json StatusOf(const json& obj);

}  // namespace switchboard::operator_controller
