// Time and duration text as the Kubernetes API writes it. Pure.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "switchboard/common/status.h"

namespace switchboard::operator_logic {

using Clock = std::chrono::system_clock;
using Time = Clock::time_point;

// "2026-11-30T10:00:00Z" (UTC, whole seconds: metav1.Time precision).
// Both through switchboard/common/rfc3339.h, the project's one RFC 3339 code.
std::string FormatTime(Time t);

// Parses RFC 3339 as Go (and so the API server) does: "Z" or a numeric
// offset; a fraction is accepted and dropped. kInvalidArgument saying what is wrong otherwise.
Result<Time> ParseTime(std::string_view text);

// A Go duration as metav1.Duration writes it: "10m", "1h30m", "90s",
// "1.5h", "500ms"; units ns us µs ms s m h. Must be non-negative.
// kInvalidArgument naming `field` otherwise.
Result<std::chrono::milliseconds> ParseDuration(std::string_view text, std::string_view field);

}  // namespace switchboard::operator_logic
