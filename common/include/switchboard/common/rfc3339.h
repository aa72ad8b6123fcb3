// RFC 3339 time text, as Go's time package writes and reads it: the one
// implementation every component uses (Kubernetes' metav1.Time and
// metav1.MicroTime, Event timestamps, Lease times, log lines, and Hatchet's
// published_at on the wire, which needs nanoseconds).
//
// Parsing follows Go's time.Parse(time.RFC3339, ...), which is what the
// Kubernetes API server and the Hatchet engine use: upper-case 'T' and 'Z',
// the day checked against its month, seconds 00-59, a fraction of any length
// (digits past the ninth are dropped) after '.' or ','. Pure.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "switchboard/common/status.h"

namespace switchboard::rfc3339 {

// An instant as Go's time.Time holds it: seconds since the Unix epoch (UTC),
// nanoseconds, and the UTC offset the text carried, so a parsed time formats
// back to the same text.
struct Time {
  int64_t unix_seconds = 0;
  int32_t nanos = 0;               // [0, 1e9)
  int32_t utc_offset_seconds = 0;  // 0 formats as "Z"

  bool operator==(const Time&) const = default;
};

Time FromSystemClock(std::chrono::system_clock::time_point t);  // offset 0
std::chrono::system_clock::time_point ToSystemClock(const Time& t);

// How many fraction digits Format writes; each is one of Go's layouts.
enum class Fraction {
  kNone,     // time.RFC3339, metav1.Time: "2006-01-02T15:04:05Z"
  kMillis,   // "2006-01-02T15:04:05.000Z" (log lines)
  kMicros,   // metav1.MicroTime: "2006-01-02T15:04:05.000000Z"
  kTrimmed,  // time.RFC3339Nano: up to nine digits, trailing zeros (and a bare '.') dropped
};

// Appends the text for t. False (nothing appended) when the local year is
// outside [0, 9999], which Go refuses to marshal as well. An offset is
// written in whole minutes, as Go does.
bool FormatTo(const Time& t, Fraction fraction, std::string* out);

// The UTC text of a clock reading, e.g. Format(now, Fraction::kNone).
// Years outside [0, 9999] give an empty string.
std::string Format(std::chrono::system_clock::time_point t, Fraction fraction);

// Parses "2006-01-02T15:04:05[.frac](Z|±hh:mm)". kInvalidArgument naming what
// is wrong and the expected form otherwise.
Result<Time> Parse(std::string_view text);

}  // namespace switchboard::rfc3339
