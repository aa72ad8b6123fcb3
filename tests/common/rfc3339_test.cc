#include "switchboard/common/rfc3339.h"

#include <gtest/gtest.h>

#include <string>

namespace switchboard::rfc3339 {
namespace {

using std::chrono::system_clock;

// 2026-11-30T10:00:00Z
constexpr int64_t kNov30 = 1796032800;

TEST(Rfc3339Test, FormatsEachLayoutAsGoDoes) {
  struct Case {
    Time t;
    Fraction f;
    const char* want;
  } cases[] = {
      {{kNov30, 0, 0}, Fraction::kNone, "2026-11-30T10:00:00Z"},
      {{kNov30, 123456789, 0}, Fraction::kNone, "2026-11-30T10:00:00Z"},
      {{kNov30, 123456789, 0}, Fraction::kMillis, "2026-11-30T10:00:00.123Z"},
      {{kNov30, 0, 0}, Fraction::kMillis, "2026-11-30T10:00:00.000Z"},
      {{kNov30, 123456789, 0}, Fraction::kMicros, "2026-11-30T10:00:00.123456Z"},
      {{kNov30, 123456789, 0}, Fraction::kTrimmed, "2026-11-30T10:00:00.123456789Z"},
      {{kNov30, 120000000, 0}, Fraction::kTrimmed, "2026-11-30T10:00:00.12Z"},
      {{kNov30, 5, 0}, Fraction::kTrimmed, "2026-11-30T10:00:00.000000005Z"},
      {{kNov30, 0, 0}, Fraction::kTrimmed, "2026-11-30T10:00:00Z"},
      {{kNov30, 0, 3600}, Fraction::kNone, "2026-11-30T11:00:00+01:00"},
      {{kNov30, 0, -(5 * 3600 + 30 * 60)}, Fraction::kNone, "2026-11-30T04:30:00-05:30"},
      {{kNov30, 0, 3601}, Fraction::kNone, "2026-11-30T11:00:01+01:00"},  // offset in minutes
      {{0, 0, 0}, Fraction::kNone, "1970-01-01T00:00:00Z"},
      {{-1, 0, 0}, Fraction::kNone, "1969-12-31T23:59:59Z"},
      {{-62135596800, 0, 0}, Fraction::kNone, "0001-01-01T00:00:00Z"},  // Go's zero time
      {{951782400, 0, 0}, Fraction::kNone, "2000-02-29T00:00:00Z"},
  };
  for (const auto& c : cases) {
    std::string out = "prefix:";
    ASSERT_TRUE(FormatTo(c.t, c.f, &out)) << c.want;
    EXPECT_EQ(out, std::string("prefix:") + c.want);
  }
}

TEST(Rfc3339Test, RefusesYearsGoCannotMarshal) {
  std::string out;
  EXPECT_FALSE(FormatTo({253402300800, 0, 0}, Fraction::kNone, &out));  // 10000-01-01
  EXPECT_FALSE(FormatTo({-62167219201, 0, 0}, Fraction::kNone, &out));  // year -1
  EXPECT_EQ(out, "");
  EXPECT_TRUE(FormatTo({253402300799, 0, 0}, Fraction::kNone, &out));  // 9999-12-31T23:59:59Z
}

TEST(Rfc3339Test, ParsesWhatGoParses) {
  struct Case {
    const char* text;
    Time want;
  } cases[] = {
      {"2026-11-30T10:00:00Z", {kNov30, 0, 0}},
      {"2026-11-30T10:00:00.123456789Z", {kNov30, 123456789, 0}},
      {"2026-11-30T10:00:00,5Z", {kNov30, 500000000, 0}},
      {"2026-11-30T10:00:00.1234567891234Z", {kNov30, 123456789, 0}},  // past nine: dropped
      {"2026-11-30T11:00:00+01:00", {kNov30, 0, 3600}},
      {"2026-11-30T04:30:00-05:30", {kNov30, 0, -(5 * 3600 + 30 * 60)}},
      {"2024-02-29T00:00:00Z", {1709164800, 0, 0}},
      {"0001-01-01T00:00:00Z", {-62135596800, 0, 0}},
  };
  for (const auto& c : cases) {
    auto r = Parse(c.text);
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.status().ToString();
    EXPECT_EQ(*r, c.want) << c.text;
  }
}

TEST(Rfc3339Test, ErrorsSayWhatIsWrong) {
  struct Case {
    const char* text;
    const char* want;
  } cases[] = {
      {"", "malformed time"},
      {"yesterday", "malformed time"},
      {"2026-11-30", "malformed time"},
      {"2026-11-30t10:00:00Z", "malformed time"},
      {"2026-11-30T10:00:00", "malformed time"},  // too short to hold a zone
      {"2026-11-30T10:00:00.5", "missing time zone"},
      {"2026-11-30T10:00:00z", "missing time zone"},
      {"2026-13-30T10:00:00Z", "month out of range"},
      {"2026-02-29T10:00:00Z", "day out of range"},
      {"2026-11-31T10:00:00Z", "day out of range"},
      {"2026-11-30T24:00:00Z", "hour out of range"},
      {"2026-11-30T10:60:00Z", "minute out of range"},
      {"2026-11-30T10:00:60Z", "second out of range"},
      {"2026-11-30T10:00:00.Z", "empty fractional second"},
      {"2026-11-30T10:00:00+0100", "malformed UTC offset"},
      {"2026-11-30T10:00:00+24:00", "UTC offset out of range"},
      {"2026-11-30T10:00:00Zjunk", "extra text after time"},
  };
  for (const auto& c : cases) {
    auto r = Parse(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.want), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("2006-01-02T15:04:05"), std::string::npos)
        << "names the expected form: " << r.status().message();
  }
}

TEST(Rfc3339Test, ParsedTextFormatsBackUnchanged) {
  for (const char* text : {"2026-11-30T10:00:00Z", "2026-11-30T10:00:00.5Z",
                           "2023-11-14T23:13:20.000000005+01:00", "1969-12-31T23:59:59.9-08:00"}) {
    auto r = Parse(text);
    ASSERT_TRUE(r.ok()) << text;
    std::string out;
    ASSERT_TRUE(FormatTo(*r, Fraction::kTrimmed, &out));
    EXPECT_EQ(out, text);
  }
}

TEST(Rfc3339Test, SystemClockRoundTripsBeforeAndAfterTheEpoch) {
  for (int64_t ns : {int64_t{0}, int64_t{1}, int64_t{-1}, kNov30 * 1'000'000'000 + 7}) {
    system_clock::time_point t(
        std::chrono::duration_cast<system_clock::duration>(std::chrono::nanoseconds(ns)));
    Time time = FromSystemClock(t);
    EXPECT_GE(time.nanos, 0);
    EXPECT_LT(time.nanos, 1'000'000'000);
    EXPECT_EQ(ToSystemClock(time), t) << ns;
  }
  EXPECT_EQ(Format(system_clock::from_time_t(kNov30), Fraction::kMicros),
            "2026-11-30T10:00:00.000000Z");
}

}  // namespace
}  // namespace switchboard::rfc3339
