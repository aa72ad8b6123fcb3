#include "switchboard/pubsub/codec.h"

#include <gtest/gtest.h>

namespace switchboard::pubsub {
namespace {

TEST(CodecSmokeTest, MinimalMessageMatchesGo) {
  Message m;
  EXPECT_EQ(EncodeMessage(m),
            R"({"id":"","messages":null,"tenant_id":"00000000-0000-0000-0000-000000000000",)"
            R"("immediately_expire":false,"persistent":false,"otel_carrier":null,"retries":0})");
}

}  // namespace
}  // namespace switchboard::pubsub
