#include "switchboard/api/quantity.h"

#include <gtest/gtest.h>

namespace switchboard::api {
namespace {

TEST(Quantity, Parses) {
  struct {
    const char* in;
    int64_t want;
  } cases[] = {{"16Mi", 16777216},
               {"64Mi", 67108864},
               {"1Ki", 1024},
               {"1Gi", 1073741824},
               {"16777216", 16777216},
               {"16M", 16000000},
               {"1k", 1000},
               {"1e6", 1000000},
               {"1E3", 1000},
               {"0.5Mi", 524288},
               {"16.5Mi", 17301504},
               {"+5", 5},
               {"-5", -5},
               {"0", 0},
               {"1000m", 1},
               {"007", 7},
               {"1Ei", int64_t{1} << 60}};
  for (const auto& c : cases) {
    auto r = ParseQuantity(std::string_view(c.in));
    ASSERT_TRUE(r.ok()) << c.in << ": " << r.status().message();
    EXPECT_EQ(*r, c.want) << c.in;
  }
}

TEST(Quantity, Rejects) {
  for (const char* in : {"", "Mi", "16MiB", "16 Mi", "abc", "1.2.3", "0.3", "1500.5m", "8Ei",
                         "99999999999999999999", "1e", "1e1000", "--1", "16mi", "1.5"}) {
    auto r = ParseQuantity(std::string_view(in));
    EXPECT_FALSE(r.ok()) << in << " parsed as " << (r.ok() ? *r : 0);
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("16Mi"), std::string::npos);
    }
  }
}

TEST(Quantity, JsonForms) {
  EXPECT_EQ(*ParseQuantity(nlohmann::json(16777216)), 16777216);
  EXPECT_EQ(*ParseQuantity(nlohmann::json(16777216.0)), 16777216);
  EXPECT_EQ(*ParseQuantity(nlohmann::json("16Mi")), 16777216);
  EXPECT_FALSE(ParseQuantity(nlohmann::json(1.5)).ok());
  EXPECT_FALSE(ParseQuantity(nlohmann::json(true)).ok());
  EXPECT_FALSE(ParseQuantity(nlohmann::json(UINT64_MAX)).ok());
}

TEST(Quantity, FormatBytes) {
  EXPECT_EQ(FormatBytes(16777216), "16Mi");
  EXPECT_EQ(FormatBytes(1000), "1000");
  EXPECT_EQ(FormatBytes(1536), "1536");
  EXPECT_EQ(FormatBytes(3072), "3Ki");
  EXPECT_EQ(FormatBytes(0), "0");
}

}  // namespace
}  // namespace switchboard::api
