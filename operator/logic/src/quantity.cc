// ParseByteQuantity: the subset of Kubernetes quantities that makes sense
// for a byte count.
#include <cstdint>
#include <limits>

#include "switchboard/operator/render.h"

namespace switchboard::operator_logic {

Result<int64_t> ParseByteQuantity(const nlohmann::json& value, std::string_view field,
                                  int64_t default_bytes) {
  const std::string f(field);
  if (value.is_null()) return default_bytes;
  if (value.is_number_integer()) {
    if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return Status::InvalidArgument(f + ": " + value.dump() + " is too large");
    }
    int64_t v = value.get<int64_t>();
    if (v < 0) return Status::InvalidArgument(f + ": " + value.dump() + " is negative");
    return v;
  }
  if (!value.is_string()) {
    return Status::InvalidArgument(f + ": " + value.dump() +
                                   " is not a byte quantity; use an integer or a string like 16Mi");
  }
  const std::string& s = value.get_ref<const std::string&>();
  auto bad = [&](std::string_view why) {
    return Status::InvalidArgument(f + ": \"" + s + "\" " + std::string(why) +
                                   "; use whole bytes like 16777216 or a quantity like 16Mi");
  };
  size_t i = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  if (i == 0) return bad("does not start with digits");
  std::string_view suffix = std::string_view(s).substr(i);
  int64_t mult;
  if (suffix.empty()) {
    mult = 1;
  } else if (suffix == "Ki") {
    mult = int64_t{1} << 10;
  } else if (suffix == "Mi") {
    mult = int64_t{1} << 20;
  } else if (suffix == "Gi") {
    mult = int64_t{1} << 30;
  } else if (suffix == "Ti") {
    mult = int64_t{1} << 40;
  } else if (suffix == "k") {
    mult = 1000;
  } else if (suffix == "M") {
    mult = 1000 * 1000;
  } else if (suffix == "G") {
    mult = 1000LL * 1000 * 1000;
  } else if (suffix == "T") {
    mult = 1000LL * 1000 * 1000 * 1000;
  } else {
    return bad("has an unsupported suffix \"" + std::string(suffix) + "\"");
  }
  int64_t n = 0;
  for (size_t k = 0; k < i; ++k) {
    if (n > (std::numeric_limits<int64_t>::max() - 9) / 10) return bad("is too large");
    n = n * 10 + (s[k] - '0');
  }
  if (n > std::numeric_limits<int64_t>::max() / mult) return bad("is too large");
  return n * mult;
}

}  // namespace switchboard::operator_logic
