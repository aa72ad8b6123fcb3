// Reading object metadata and status from Kubernetes JSON (what every reconcile step
// asks of an object besides its spec, which api::BackendView and
// api::NatsServerView read). Pure.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "switchboard/api/metadata.h"
#include "switchboard/operator_logic/packed.h"

namespace switchboard::operator_controller {

using json = nlohmann::json;

// The one set of metadata accessors (api/metadata.h), and the one way to
// read a status, cached or not (operator_logic/packed.h).
using api::Annotation;
using api::GenerationOf;
using api::HasFinalizer;
using api::IsDeleting;
using api::UidOf;
using operator_logic::StatusOf;

}  // namespace switchboard::operator_controller
