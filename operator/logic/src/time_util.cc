#include "switchboard/operator/time_util.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace switchboard::operator_logic {
namespace {

bool ParseDigits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

}  // namespace

std::string FormatTime(Time t) {
  std::time_t secs = Clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return buf;
}

Result<Time> ParseTime(std::string_view s) {
  auto bad = [&] {
    return Status::InvalidArgument("\"" + std::string(s) +
                                   "\" is not an RFC 3339 time like 2026-11-30T10:00:00Z");
  };
  int y, mo, d, h, mi, se;
  if (s.size() < 20 || !ParseDigits(s, 0, 4, &y) || s[4] != '-' || !ParseDigits(s, 5, 2, &mo) ||
      s[7] != '-' || !ParseDigits(s, 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
      !ParseDigits(s, 11, 2, &h) || s[13] != ':' || !ParseDigits(s, 14, 2, &mi) || s[16] != ':' ||
      !ParseDigits(s, 17, 2, &se)) {
    return bad();
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) return bad();
  size_t pos = 19;
  if (s[pos] == '.') {
    ++pos;
    size_t start = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
    if (pos == start) return bad();
  }
  int offset_secs = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!ParseDigits(s, pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !ParseDigits(s, pos + 4, 2, &om)) {
      return bad();
    }
    offset_secs = (oh * 3600 + om * 60) * (s[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return bad();
  }
  if (pos != s.size()) return bad();
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = se;
  std::time_t secs = timegm(&tm);
  return Clock::from_time_t(secs - offset_secs);
}

Result<std::chrono::milliseconds> ParseDuration(std::string_view text, std::string_view field) {
  auto bad = [&](std::string_view why) {
    return Status::InvalidArgument(std::string(field) + ": \"" + std::string(text) + "\" " +
                                   std::string(why) + "; use a duration like 10m, 1h30m or 90s");
  };
  if (text.empty()) return bad("is empty");
  if (text == "0") return std::chrono::milliseconds(0);
  if (text[0] == '-') return bad("is negative");
  if (text[0] == '+') text.remove_prefix(1);
  long double total_ns = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    while (i < text.size() && ((text[i] >= '0' && text[i] <= '9') || text[i] == '.')) ++i;
    if (i == start) return bad("has no number before a unit");
    std::string num(text.substr(start, i - start));
    if (num == "." || std::count(num.begin(), num.end(), '.') > 1) return bad("has a bad number");
    long double value = std::strtold(num.c_str(), nullptr);
    size_t ustart = i;
    while (i < text.size() && !((text[i] >= '0' && text[i] <= '9') || text[i] == '.')) ++i;
    std::string_view unit = text.substr(ustart, i - ustart);
    long double scale;
    if (unit == "ns") {
      scale = 1;
    } else if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") {
      scale = 1e3;
    } else if (unit == "ms") {
      scale = 1e6;
    } else if (unit == "s") {
      scale = 1e9;
    } else if (unit == "m") {
      scale = 60e9;
    } else if (unit == "h") {
      scale = 3600e9;
    } else if (unit.empty()) {
      return bad("has a number without a unit");
    } else {
      return bad("has an unknown unit \"" + std::string(unit) + "\"");
    }
    total_ns += value * scale;
    // Go's limit: about 290 years.
    if (total_ns > 9.2e18L) return bad("is too long");
  }
  return std::chrono::milliseconds(static_cast<int64_t>(total_ns / 1e6L));
}

}  // namespace switchboard::operator_logic
