// JSON string escaping exactly as Go's encoding/json does it with HTML
// escaping on (json.Marshal's default).
#pragma once

#include <string>
#include <string_view>

namespace switchboard::pubsub::internal {

// Appends `s` as a quoted JSON string.
void AppendJsonString(std::string_view s, std::string* out);
// Size AppendJsonString would append.
size_t JsonStringSize(std::string_view s);

}  // namespace switchboard::pubsub::internal
