#include "switchboard/kube/request.h"

#include <gtest/gtest.h>

namespace switchboard::kube {
namespace {

TEST(ResourcePath, CoreNamespacedNamed) {
  EXPECT_EQ(request::ResourcePath(resources::Secret(), "ns", "x"),
            "/api/v1/namespaces/ns/secrets/x");
}

}  // namespace
}  // namespace switchboard::kube
