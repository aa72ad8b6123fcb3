#include "switchboard/common/rfc3339.h"

namespace switchboard::rfc3339 {
namespace {

constexpr int64_t kNanosPerSecond = 1'000'000'000;
constexpr int64_t kSecondsPerDay = 86400;

// Howard Hinnant's days_from_civil / civil_from_days (proleptic Gregorian),
// so no call depends on the C library's time zone or on time_t's range.
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int64_t>(yoe) + era * 400 + (*m <= 2);
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned DaysIn(int64_t y, unsigned m) {
  static const unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

// Fraction digits written for `nanos`: fixed for the fixed layouts, the
// significant ones (possibly none) for kTrimmed.
int FractionDigits(Fraction f, int64_t nanos, char frac[9]) {
  int64_t v = nanos;
  for (int i = 8; i >= 0; --i) {
    frac[i] = static_cast<char>('0' + v % 10);
    v /= 10;
  }
  switch (f) {
    case Fraction::kNone:
      return 0;
    case Fraction::kMillis:
      return 3;
    case Fraction::kMicros:
      return 6;
    case Fraction::kTrimmed:
      break;
  }
  int len = nanos == 0 ? 0 : 9;
  while (len > 0 && frac[len - 1] == '0') --len;
  return len;
}

}  // namespace

Time FromSystemClock(std::chrono::system_clock::time_point t) {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  Time out;
  out.unix_seconds = FloorDiv(ns, kNanosPerSecond);
  out.nanos = static_cast<int32_t>(ns - out.unix_seconds * kNanosPerSecond);
  return out;
}

std::chrono::system_clock::time_point ToSystemClock(const Time& t) {
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::seconds(t.unix_seconds) + std::chrono::nanoseconds(t.nanos)));
}

bool FormatTo(const Time& t, Fraction fraction, std::string* out) {
  int64_t secs = t.unix_seconds + t.utc_offset_seconds;
  int64_t days = FloorDiv(secs, kSecondsPerDay);
  int64_t sod = secs - days * kSecondsPerDay;
  int64_t year;
  unsigned month, day;
  CivilFromDays(days, &year, &month, &day);
  if (year < 0 || year > 9999) return false;
  // Hand-written digits rather than snprintf: this runs on every
  // instrumented publish (BENCHMARKS.md, pubsub-runtime codec).
  char buf[40];
  char* o = buf;
  auto put2 = [&](int v) {
    *o++ = static_cast<char>('0' + v / 10);
    *o++ = static_cast<char>('0' + v % 10);
  };
  put2(static_cast<int>(year / 100));
  put2(static_cast<int>(year % 100));
  *o++ = '-';
  put2(static_cast<int>(month));
  *o++ = '-';
  put2(static_cast<int>(day));
  *o++ = 'T';
  put2(static_cast<int>(sod / 3600));
  *o++ = ':';
  put2(static_cast<int>(sod / 60 % 60));
  *o++ = ':';
  put2(static_cast<int>(sod % 60));
  char frac[9];
  int len = FractionDigits(fraction, t.nanos, frac);
  if (len > 0) {
    *o++ = '.';
    for (int i = 0; i < len; ++i) *o++ = frac[i];
  }
  if (t.utc_offset_seconds == 0) {
    *o++ = 'Z';
  } else {
    int off = t.utc_offset_seconds / 60;  // Go writes minutes; seconds are dropped
    *o++ = off < 0 ? '-' : '+';
    if (off < 0) off = -off;
    put2(off / 60);
    *o++ = ':';
    put2(off % 60);
  }
  out->append(buf, static_cast<size_t>(o - buf));
  return true;
}

std::string Format(std::chrono::system_clock::time_point t, Fraction fraction) {
  std::string out;
  FormatTo(FromSystemClock(t), fraction, &out);
  return out;
}

Result<Time> Parse(std::string_view s) {
  int year, month, day, hour, minute, second;
  auto fail = [&](const char* what) {
    return Status::InvalidArgument(std::string(what) + " in \"" + std::string(s.substr(0, 64)) +
                                   "\"; want RFC 3339 like 2006-01-02T15:04:05.999999999Z07:00");
  };
  if (!Digits(s, 0, 4, &year) || s.size() < 20 || s[4] != '-' || !Digits(s, 5, 2, &month) ||
      s[7] != '-' || !Digits(s, 8, 2, &day) || s[10] != 'T' || !Digits(s, 11, 2, &hour) ||
      s[13] != ':' || !Digits(s, 14, 2, &minute) || s[16] != ':' || !Digits(s, 17, 2, &second)) {
    return fail("malformed time");
  }
  if (month < 1 || month > 12) return fail("month out of range");
  if (day < 1 || static_cast<unsigned>(day) > DaysIn(year, static_cast<unsigned>(month))) {
    return fail("day out of range");
  }
  if (hour > 23) return fail("hour out of range");
  if (minute > 59) return fail("minute out of range");
  if (second > 59) return fail("second out of range");
  size_t pos = 19;
  int64_t nanos = 0;
  if (pos < s.size() && (s[pos] == '.' || s[pos] == ',')) {
    size_t start = ++pos;
    int64_t scale = kNanosPerSecond;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (scale > 1) {
        scale /= 10;
        nanos += (s[pos] - '0') * scale;
      }
      ++pos;
    }
    if (pos == start) return fail("empty fractional second");
  }
  int offset = 0;
  if (pos < s.size() && s[pos] == 'Z') {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!Digits(s, pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !Digits(s, pos + 4, 2, &om)) {
      return fail("malformed UTC offset");
    }
    if (oh > 23 || om > 59) return fail("UTC offset out of range");
    offset = (oh * 3600 + om * 60) * (s[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return fail("missing time zone (Z or +hh:mm)");
  }
  if (pos != s.size()) return fail("extra text after time");
  int64_t days = DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  int64_t local_secs = days * kSecondsPerDay + hour * 3600 + minute * 60 + second;
  Time out;
  out.unix_seconds = local_secs - offset;
  out.nanos = static_cast<int32_t>(nanos);
  out.utc_offset_seconds = offset;
  return out;
}

}  // namespace switchboard::rfc3339
