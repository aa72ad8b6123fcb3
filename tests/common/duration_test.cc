#include "switchboard/common/duration.h"

#include <gtest/gtest.h>

namespace switchboard {
namespace {

TEST(Duration, Parses) {
  EXPECT_EQ(*ParseDuration("10m"), 600'000'000'000);
  EXPECT_EQ(*ParseDuration("1h30m"), 5'400'000'000'000);
  EXPECT_EQ(*ParseDuration("1.5h"), 5'400'000'000'000);
  EXPECT_EQ(*ParseDuration("90s"), 90'000'000'000);
  EXPECT_EQ(*ParseDuration("250ms"), 250'000'000);
  EXPECT_EQ(*ParseDuration("0"), 0);
  EXPECT_EQ(*ParseDuration("-1m"), -60'000'000'000);
  for (const char* bad : {"", "10", "m", "10 m", "10x", "1h-5m", "99999999999h"}) {
    EXPECT_FALSE(ParseDuration(bad).ok()) << bad;
  }
}

TEST(Duration, AcceptsGoStyleDurations) {
  struct Case {
    const char* text;
    int64_t ns;
  } cases[] = {{"500ms", 500'000'000},
               {"5s", 5'000'000'000},
               {"10m", 600'000'000'000},
               {"1h", 3'600'000'000'000},
               {"1m30s", 90'000'000'000},
               {"1.5s", 1'500'000'000},
               {"2us", 2'000},
               {"2\xc2\xb5s", 2'000},
               {"3ns", 3},
               {"+5s", 5'000'000'000}};
  for (const auto& c : cases) {
    auto d = ParseDuration(c.text);
    ASSERT_TRUE(d.ok()) << c.text << ": " << d.status().ToString();
    EXPECT_EQ(*d, c.ns) << c.text;
  }
}

TEST(Duration, RejectsGarbageNamingTheFix) {
  for (const char* text : {"", "5", "s", "5x", "5s5", ".s"}) {
    auto d = ParseDuration(text);
    ASSERT_FALSE(d.ok()) << text;
    EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(d.status().message().find("e.g. 500ms"), std::string::npos) << d.status().message();
    EXPECT_NE(d.status().message().find("not a duration"), std::string::npos);
  }
  EXPECT_NE(ParseDuration("5").status().message().find("only 0 may go without"), std::string::npos)
      << "a bare number is refused, as Go refuses it";
}

}  // namespace
}  // namespace switchboard
