#include "switchboard/controller/registry.h"

#include <gtest/gtest.h>

namespace switchboard::controller {
namespace {

NatsUser U(const std::string& name) { return {name, "$2b$11$hash", "p." + name + ".*"}; }

TEST(Registry, RenderedTracksEpochs) {
  Registry r;
  uint64_t e1 = r.Set("a/x", "s/srv", {U("x")});
  EXPECT_TRUE(r.Known("a/x"));
  EXPECT_FALSE(r.Rendered("a/x"));
  uint64_t epoch = 0;
  auto entries = r.Entries("s/srv", &epoch);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(epoch, e1);
  r.MarkRendered("s/srv", epoch, true);
  EXPECT_TRUE(r.Rendered("a/x"));
  // The same users again: no new epoch, still rendered.
  EXPECT_EQ(r.Set("a/x", "s/srv", {U("x")}), e1);
  EXPECT_TRUE(r.Rendered("a/x"));
  // A change needs a new render.
  uint64_t e2 = r.Set("a/x", "s/srv", {U("x"), U("old")});
  EXPECT_GT(e2, e1);
  EXPECT_FALSE(r.Rendered("a/x"));
}

TEST(Registry, RemoveNeedsARenderWithoutTheBackend) {
  Registry r;
  r.Set("a/x", "s/srv", {U("x")});
  r.Set("b/y", "s/srv", {U("y")});
  r.MarkRendered("s/srv", 2, false);
  uint64_t e = r.Remove("a/x", "s/srv");
  EXPECT_GT(e, r.RenderedEpoch("s/srv"));
  EXPECT_FALSE(r.Known("a/x"));
  uint64_t epoch = 0;
  auto entries = r.Entries("s/srv", &epoch);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].backend_key, "b/y");
  // Works for a backend never seen (after an operator restart).
  EXPECT_GT(r.Remove("c/z", "s/srv"), e);
}

TEST(Registry, MovingServersLeavesTheOldOne) {
  Registry r;
  r.Set("a/x", "s/one", {U("x")});
  std::string old;
  r.Set("a/x", "s/two", {U("x")}, &old);
  EXPECT_EQ(old, "s/one");
  EXPECT_TRUE(r.Entries("s/one", nullptr).empty());
  EXPECT_EQ(r.ServerOf("a/x"), "s/two");
}

}  // namespace
}  // namespace switchboard::controller
