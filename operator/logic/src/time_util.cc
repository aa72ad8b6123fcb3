#include "switchboard/operator_logic/time_util.h"

#include "switchboard/common/duration.h"
#include "switchboard/common/rfc3339.h"

namespace switchboard::operator_logic {

std::string FormatTime(Time t) { return rfc3339::Format(t, rfc3339::Fraction::kNone); }

Result<Time> ParseTime(std::string_view s) {
  auto t = rfc3339::Parse(s);
  if (!t.ok()) return t.status();
  t->nanos = 0;  // metav1.Time precision, so a parsed time equals its formatted self
  return rfc3339::ToSystemClock(*t);
}

Result<std::chrono::milliseconds> ParseDuration(std::string_view text, std::string_view field) {
  // The project's one Go duration grammar (common/), shared with the rules.
  auto ns = switchboard::ParseDuration(text);
  if (!ns.ok()) return ns.status().Annotate(field);
  if (*ns < 0) {
    return Status::InvalidArgument(std::string(field) + ": \"" + std::string(text) +
                                   "\" is negative; use a duration like 10m, 1h30m or 90s");
  }
  return std::chrono::milliseconds(*ns / 1000000);
}

}  // namespace switchboard::operator_logic
