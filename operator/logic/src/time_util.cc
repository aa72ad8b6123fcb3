#include "switchboard/operator_logic/time_util.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "switchboard/api/duration.h"

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
  // One parser for Go durations in the project (api/, shared with the rules).
  auto ns = api::ParseDuration(text);
  if (!ns.ok()) return ns.status().Annotate(field);
  if (*ns < 0) {
    return Status::InvalidArgument(std::string(field) + ": \"" + std::string(text) +
                                   "\" is negative; use a duration like 10m, 1h30m or 90s");
  }
  return std::chrono::milliseconds(*ns / 1000000);
}

}  // namespace switchboard::operator_logic
