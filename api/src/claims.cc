#include "switchboard/api/claims.h"

#include "switchboard/api/json_fields.h"
#include "switchboard/common/rfc3339.h"

namespace switchboard::api {

std::optional<int64_t> CreationTimeOf(const nlohmann::json& object) {
  auto text = String(Path(object, {"metadata", "creationTimestamp"}));
  if (!text || text->empty()) return std::nullopt;
  auto t = rfc3339::Parse(*text);
  if (!t.ok()) return std::nullopt;
  return t->unix_seconds;
}

ClaimAge ClaimAgeOf(const nlohmann::json& object) {
  return {CreationTimeOf(object), KeyOf(object)};
}

bool KeepsClaim(const ClaimAge& a, const ClaimAge& b) {
  if (a.created.has_value() != b.created.has_value()) return a.created.has_value();
  if (a.created && *a.created != *b.created) return *a.created < *b.created;
  return a.key < b.key;
}

}  // namespace switchboard::api
