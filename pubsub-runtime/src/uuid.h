// UUID text in the forms google/uuid's Parse accepts (36-char canonical,
// "urn:uuid:" prefixed, {braced}, 32 hex digits), normalised to lowercase
// canonical form, as Go re-encodes it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace switchboard::pubsub::internal {

std::optional<std::string> NormalizeUuid(std::string_view text);
// True for the canonical lowercase 36-character form (no allocation).
bool IsCanonicalUuid(std::string_view text);

}  // namespace switchboard::pubsub::internal
