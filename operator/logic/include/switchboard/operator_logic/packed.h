// The one way to read a member the operator's informer caches may keep
// packed (a backend's or server's status; operator/controller's
// cache_shapes.h says which and why). Only the operator packs: the other
// components read objects as the API sends them.
//
// A packed member is a JSON *binary* value holding the member's JSON text.
// Binary, not a string, so that reading a cached object as if it came from
// the API fails loudly: obj["status"]["conditions"], .value(...) and .at(...)
// on it throw nlohmann::json::type_error, and no string check mistakes it for
// a field. Every reader goes through the accessors below, which read both
// shapes alike, so code shared by the operator, the authorizer, the webhook
// and the CLI never needs to know where an object came from.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

namespace switchboard::operator_logic {

// The packed form of `member` (any JSON value).
nlohmann::json Pack(const nlohmann::json& member);

// True when `value` is a packed member.
bool IsPacked(const nlohmann::json& value);

// Member `key` of `object` as a JSON object, whether it is one or is packed:
// an empty object when `object` is not an object, lacks `key`, or holds an
// unpacked value of another type; nullopt when it is packed and what it
// holds is not a JSON object (a corrupt cache entry: the caller says so).
std::optional<nlohmann::json> ObjectMember(const nlohmann::json& object, std::string_view key);

// .status as an object (ObjectMember); an empty object when unreadable.
nlohmann::json StatusOf(const nlohmann::json& object);

// A copy of `object` with every packed top-level member unpacked: the
// object as the API server shows it, for code that walks the whole object
// (the rules check the status's type and read status.username).
nlohmann::json ApiShaped(const nlohmann::json& object);

}  // namespace switchboard::operator_logic
