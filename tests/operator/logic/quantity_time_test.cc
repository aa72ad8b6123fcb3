#include <gtest/gtest.h>

#include "switchboard/operator_logic/render.h"
#include "switchboard/operator_logic/time_util.h"

namespace switchboard::operator_logic {
namespace {

using nlohmann::json;

TEST(ParseByteQuantity, Table) {
  struct Case {
    json value;
    int64_t want;  // -1: error
  } cases[] = {
      {nullptr, 16777216},
      {16777216, 16777216},
      {"16777216", 16777216},
      {"16Mi", 16777216},
      {"64Mi", 67108864},
      {"1Gi", 1073741824},
      {"512Ki", 524288},
      {"20M", 20000000},
      {"3k", 3000},
      {"1Ti", 1099511627776},
      {"0", 0},
      {-1, -1},
      {"-16Mi", -1},
      // resource.Quantity forms (api/quantity.h, the one parser); whether the
      // API accepts them is the CRD's and the rules' call, not the renderer's.
      {"16.5Mi", 17301504},
      {"1e6", 1000000},
      {"16MiB", -1},
      {"16 Mi", -1},
      {"", -1},
      {"Mi", -1},
      {1.5, -1},
      {true, -1},
      {"99999999999999999999", -1},
      {"9999999999Ti", -1},
  };
  for (const auto& c : cases) {
    auto r = ParseByteQuantity(c.value, "spec.maxPayload");
    if (c.want < 0) {
      ASSERT_FALSE(r.ok()) << c.value.dump();
      EXPECT_EQ(r.status().message().rfind("spec.maxPayload: ", 0), 0u) << r.status().message();
    } else {
      ASSERT_TRUE(r.ok()) << c.value.dump() << " " << r.status().ToString();
      EXPECT_EQ(*r, c.want) << c.value.dump();
    }
  }
}

TEST(ParseDuration, Table) {
  using std::chrono::milliseconds;
  struct Case {
    std::string text;
    int64_t want_ms;  // -1: error
  } cases[] = {
      {"10m", 600000}, {"1h30m", 5400000}, {"90s", 90000},      {"1.5h", 5400000}, {"500ms", 500},
      {"0", 0},        {"0s", 0},          {"2h0m0s", 7200000}, {"", -1},          {"-5m", -1},
      {"10", -1},      {"10d", -1},        {"m", -1},           {"1..5s", -1},     {"5 m", -1},
  };
  for (const auto& c : cases) {
    auto r = ParseDuration(c.text, "spec.nats.credentials.rotationGracePeriod");
    if (c.want_ms < 0) {
      ASSERT_FALSE(r.ok()) << c.text;
      EXPECT_NE(r.status().message().find("rotationGracePeriod"), std::string::npos);
    } else {
      ASSERT_TRUE(r.ok()) << c.text << " " << r.status().ToString();
      EXPECT_EQ(r->count(), c.want_ms) << c.text;
    }
  }
}

TEST(Time, FormatAndParseRoundTrip) {
  auto t = ParseTime("2026-11-30T10:00:05Z");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(FormatTime(*t), "2026-11-30T10:00:05Z");
  auto offset = ParseTime("2026-11-30T11:00:05.123+01:00");
  ASSERT_TRUE(offset.ok());
  EXPECT_EQ(FormatTime(*offset), "2026-11-30T10:00:05Z");
  for (const char* bad : {"", "2026-11-30", "2026-11-30T10:00:05", "2026-13-30T10:00:05Z",
                          "2026-11-30T10:00:05Zjunk", "yesterday"}) {
    EXPECT_FALSE(ParseTime(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace switchboard::operator_logic
