#include "switchboard/common/status.h"

#include <gtest/gtest.h>

namespace switchboard {
namespace {

Result<int> Half(int n) {
  if (n % 2 != 0)
    return Status::InvalidArgument("n: " + std::to_string(n) + " is odd; pass an even number");
  return n / 2;
}

Status Chain(int n) {
  auto r = Half(n);
  if (!r.ok()) return r.status().Annotate("halving");
  return Status::Ok();
}

TEST(StatusTest, OkByDefault) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(StatusTest, ResultCarriesValueOrError) {
  auto good = Half(4);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 2);
  auto bad = Half(3);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().ToString(), "InvalidArgument: n: 3 is odd; pass an even number");
}

TEST(StatusTest, AnnotateKeepsCode) {
  Status s = Chain(5);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "halving: n: 5 is odd; pass an even number");
  EXPECT_TRUE(Chain(6).ok());
}

}  // namespace
}  // namespace switchboard
