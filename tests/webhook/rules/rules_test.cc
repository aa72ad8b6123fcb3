#include <gtest/gtest.h>

#include "switchboard/validation/validate.h"
#include "test_objects.h"

namespace switchboard::validation {
namespace {

using testing::Backend;
using testing::Server;

TEST(Rules, ValidObjectsPass) {
  Context ctx;
  ctx.servers.push_back(Server());
  Report r = Validate(Backend(), ctx);
  EXPECT_TRUE(r.ok()) << (r.errors.empty() ? "" : r.errors[0].ToString());
  EXPECT_TRUE(r.warnings.empty()) << r.warnings[0].ToString();
  Report s = Validate(Server(), ctx);
  EXPECT_TRUE(s.ok()) << (s.errors.empty() ? "" : s.errors[0].ToString());
}

}  // namespace
}  // namespace switchboard::validation
