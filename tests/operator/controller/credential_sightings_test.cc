// CredentialSightings: since when each backend's password has been seen.
#include "credential_sightings.h"

#include <gtest/gtest.h>

namespace {

using switchboard::operator_controller::CredentialSightings;

// AuthCallout: since when a backend's password (its hash) has been seen;
// a new hash (a rotation) starts again, forgetting the backend too.
TEST(CredentialSightings, CountFromTheFirstSightOfEachHash) {
  CredentialSightings index;
  const auto t0 = std::chrono::steady_clock::now();
  using std::chrono::milliseconds;
  EXPECT_EQ(index.Since("a/b", "h1", t0), milliseconds(0));
  EXPECT_EQ(index.Since("a/b", "h1", t0 + milliseconds(700)), milliseconds(700));
  EXPECT_EQ(index.Since("a/c", "h1", t0 + milliseconds(700)), milliseconds(0));
  EXPECT_EQ(index.Since("a/b", "h2", t0 + milliseconds(900)), milliseconds(0));
  EXPECT_EQ(index.Since("a/b", "h2", t0 + milliseconds(1000)), milliseconds(100));
  index.Forget("a/b");
  EXPECT_EQ(index.Since("a/b", "h2", t0 + milliseconds(2000)), milliseconds(0));
}

}  // namespace
