// ParseByteQuantity: spec.maxPayload / maxPending in bytes, through the one
// quantity parser the rules use too (api/quantity.h).
#include "switchboard/api/quantity.h"

#include "switchboard/operator_logic/render.h"

namespace switchboard::operator_logic {

Result<int64_t> ParseByteQuantity(const nlohmann::json& value, std::string_view field,
                                  int64_t default_bytes) {
  if (value.is_null()) return default_bytes;
  auto bytes = api::ParseQuantity(value);
  if (!bytes.ok()) return bytes.status().Annotate(field);
  if (*bytes < 0) {
    return Status::InvalidArgument(std::string(field) + ": " + value.dump() +
                                   " is negative; use a size like 16Mi");
  }
  return *bytes;
}

}  // namespace switchboard::operator_logic
