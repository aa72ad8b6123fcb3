#include "uuid.h"

#include <cctype>

namespace switchboard::pubsub::internal {

// Already canonical (36 chars, lowercase hex, dashes in place): the common
// case on the wire, checked without allocating.
bool IsCanonicalUuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < 36; ++i) {
    char c = s[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return false;
    }
  }
  return true;
}

std::optional<std::string> NormalizeUuid(std::string_view s) {
  if (IsCanonicalUuid(s)) return std::string(s);
  auto iequal = [](std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
    }
    return true;
  };
  std::string hex;
  if (s.size() == 45) {
    if (!iequal(s.substr(0, 9), "urn:uuid:")) return std::nullopt;
    s.remove_prefix(9);
  } else if (s.size() == 38) {
    if (s.front() != '{' || s.back() != '}') return std::nullopt;
    s = s.substr(1, 36);
  }
  if (s.size() == 36) {
    if (s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-') return std::nullopt;
    for (size_t i = 0; i < 36; ++i) {
      if (i != 8 && i != 13 && i != 18 && i != 23) hex.push_back(s[i]);
    }
  } else if (s.size() == 32) {
    hex = std::string(s);
  } else {
    return std::nullopt;
  }
  std::string out;
  out.reserve(36);
  for (size_t i = 0; i < 32; ++i) {
    unsigned char c = static_cast<unsigned char>(hex[i]);
    if (!std::isxdigit(c)) return std::nullopt;
    if (i == 8 || i == 12 || i == 16 || i == 20) out.push_back('-');
    out.push_back(static_cast<char>(std::tolower(c)));
  }
  return out;
}

}  // namespace switchboard::pubsub::internal
