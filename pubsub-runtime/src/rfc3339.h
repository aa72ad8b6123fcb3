// RFC 3339 times as Go's time.Time marshals (RFC3339Nano: fraction with
// trailing zeros trimmed, "Z" for a zero offset) and unmarshals them.
#pragma once

#include <string>
#include <string_view>

#include "switchboard/pubsub/message.h"

namespace switchboard::pubsub::internal {

// Appends the text (without quotes). False when the year is outside
// [0, 9999], which Go refuses to marshal as well.
bool FormatRfc3339Nano(const Timestamp& t, std::string* out);

// Parses "2006-01-02T15:04:05[.frac](Z|±hh:mm)". On failure returns false and
// sets *error to what is wrong.
bool ParseRfc3339(std::string_view text, Timestamp* out, std::string* error);

}  // namespace switchboard::pubsub::internal
