#include "switchboard/common/duration.h"

#include <cmath>
#include <string>

namespace switchboard {
namespace {

Status Bad(std::string_view text, std::string_view why) {
  return Status::InvalidArgument("\"" + std::string(text) + "\" is not a duration (" +
                                 std::string(why) + "); write e.g. 500ms, 90s, 10m or 1h30m");
}

}  // namespace

Result<int64_t> ParseDuration(std::string_view text) {
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return int64_t{0};
  if (s.empty()) return Bad(text, "empty");
  long double total = 0;
  while (!s.empty()) {
    size_t i = 0;
    bool any = false;
    long double number = 0;
    long double scale = 1;
    bool dot = false;
    for (; i < s.size(); ++i) {
      char c = s[i];
      if (c == '.' && !dot) {
        dot = true;
        continue;
      }
      if (c < '0' || c > '9') break;
      any = true;
      if (dot) {
        scale /= 10;
        number += (c - '0') * scale;
      } else {
        number = number * 10 + (c - '0');
      }
    }
    if (!any) return Bad(text, "expected a number");
    s.remove_prefix(i);
    size_t u = 0;
    while (u < s.size() && !(s[u] >= '0' && s[u] <= '9') && s[u] != '.') ++u;
    std::string_view unit = s.substr(0, u);
    s.remove_prefix(u);
    long double ns;
    if (unit == "ns")
      ns = 1;
    else if (unit == "us" || unit == "\xc2\xb5s" || unit == "\xce\xbcs")
      ns = 1e3;
    else if (unit == "ms")
      ns = 1e6;
    else if (unit == "s")
      ns = 1e9;
    else if (unit == "m")
      ns = 60e9;
    else if (unit == "h")
      ns = 3600e9;
    else if (unit.empty())
      return Bad(text, "missing unit: only 0 may go without one");
    else
      return Bad(text, "unknown unit \"" + std::string(unit) + "\"");
    total += number * ns;
    if (total > 9.2e18L) return Bad(text, "too long");
  }
  int64_t v = static_cast<int64_t>(std::llround(static_cast<double>(total)));
  return negative ? -v : v;
}

}  // namespace switchboard
