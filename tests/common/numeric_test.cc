#include "switchboard/common/numeric.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace switchboard {
namespace {

struct Case {
  const char* name;
  double in;
  std::optional<int64_t> whole;
  std::optional<int64_t> truncated;
};

constexpr double kTwoTo63 = 9223372036854775808.0;
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const Case kCases[] = {
    {"zero", 0.0, 0, 0},
    {"negative zero", -0.0, 0, 0},
    {"small", 42.0, 42, 42},
    {"negative", -7.0, -7, -7},
    {"fraction", 1.5, std::nullopt, 1},
    {"negative fraction", -1.5, std::nullopt, -1},
    {"16Mi", 16777216.0, 16777216, 16777216},
    // The largest double below 2^63 converts; 2^63 itself does not fit.
    {"just below 2^63", std::nextafter(kTwoTo63, 0.0), 9223372036854774784, 9223372036854774784},
    {"2^63", kTwoTo63, std::nullopt, std::nullopt},
    {"-2^63 fits", -kTwoTo63, kMin, kMin},
    {"below -2^63", std::nextafter(-kTwoTo63, -kInf), std::nullopt, std::nullopt},
    {"1e300", 1e300, std::nullopt, std::nullopt},
    {"-1e300", -1e300, std::nullopt, std::nullopt},
    {"+inf", kInf, std::nullopt, std::nullopt},
    {"-inf", -kInf, std::nullopt, std::nullopt},
    {"nan", kNaN, std::nullopt, std::nullopt},
    {"-nan", -kNaN, std::nullopt, std::nullopt},
    {"denormal", std::numeric_limits<double>::denorm_min(), std::nullopt, 0},
};

TEST(NumericTest, WholeToInt64) {
  for (const Case& c : kCases) {
    EXPECT_EQ(WholeToInt64(c.in), c.whole) << c.name;
  }
}

TEST(NumericTest, TruncateToInt64) {
  for (const Case& c : kCases) {
    EXPECT_EQ(TruncateToInt64(c.in), c.truncated) << c.name;
  }
}

}  // namespace
}  // namespace switchboard
