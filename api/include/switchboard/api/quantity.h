// Kubernetes quantities for byte sizes ("16Mi", "64M", "1e6", 16777216), as
// used by NatsServer spec.maxPayload and spec.maxPending. Pure.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "switchboard/common/status.h"

namespace switchboard::api {

// Parses a resource.Quantity string into a whole number of bytes: an optional
// sign, decimal digits with an optional fraction, then a binary suffix
// (Ki Mi Gi Ti Pi Ei), a decimal suffix (m k M G T P E) or an exponent (e6).
// InvalidArgument (message says why and shows a valid form) when it does not
// parse, is not a whole number of bytes, or does not fit in int64.
Result<int64_t> ParseQuantity(std::string_view text);

// The same for an int-or-string JSON field: an integer (or whole float), or a
// quantity string. Any other JSON type is InvalidArgument.
Result<int64_t> ParseQuantity(const nlohmann::json& value);

// The shortest exact binary form: 16777216 -> "16Mi", 1000 -> "1000".
std::string FormatBytes(int64_t bytes);

}  // namespace switchboard::api
