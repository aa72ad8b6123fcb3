#include "switchboard/authorizer/rebuild_pacing.h"

#include <gtest/gtest.h>

namespace switchboard::authorizer {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

json Backend(const std::string& rv, const std::string& prefix) {
  return {
      {"metadata", {{"name", "a"}, {"namespace", "ns"}, {"uid", "u1"}, {"resourceVersion", rv}}},
      {"spec", {{"kind", "nats"}, {"nats", {{"subjectPrefix", prefix}}}}}};
}

TEST(ChangesWhatIsServed, Table) {
  json deleting = Backend("2", "hatchet.a");
  deleting["metadata"]["deletionTimestamp"] = "2026-12-02T08:00:00Z";
  json secret = {{"metadata", {{"name", "s"}, {"resourceVersion", "1"}}},
                 {"data", {{"state", "e30="}}}};
  json rotated = secret;
  rotated["metadata"]["resourceVersion"] = "2";
  rotated["data"]["state"] = "eyJhIjoxfQ==";
  json env_before = {{"metadata", {{"name", "env"}, {"resourceVersion", "1"}}}};
  json env_after = {{"metadata", {{"name", "env"}, {"resourceVersion", "7"}}}};
  json no_meta_rv = Backend("1", "hatchet.a");
  no_meta_rv["metadata"].erase("resourceVersion");
  struct Case {
    const char* name;
    json before, after;
    bool changes;
  } cases[] = {
      {"only resourceVersion (a status write the projection dropped)", Backend("1", "hatchet.a"),
       Backend("2", "hatchet.a"), false},
      {"an env Secret kept by name: its data writes change nothing", env_before, env_after, false},
      {"the same object", Backend("1", "hatchet.a"), Backend("1", "hatchet.a"), false},
      {"a resourceVersion appearing alone", no_meta_rv, Backend("1", "hatchet.a"), false},
      {"the prefix", Backend("1", "hatchet.a"), Backend("2", "hatchet.b"), true},
      {"a deletionTimestamp", Backend("1", "hatchet.a"), deleting, true},
      {"a Secret's data", secret, rotated, true},
      {"a top-level member appears", env_before, secret, true},
      {"metadata's other members", Backend("1", "hatchet.a"),
       json::parse(R"({"metadata":{"name":"b","namespace":"ns","uid":"u1","resourceVersion":"2"},
                      "spec":{"kind":"nats","nats":{"subjectPrefix":"hatchet.a"}}})"),
       true},
      {"not objects", json("x"), json("y"), true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(ChangesWhatIsServed(c.before, c.after), c.changes);
    EXPECT_EQ(ChangesWhatIsServed(c.after, c.before), c.changes) << "symmetric";
  }
}

TEST(RebuildPause, InProportionAndBounded) {
  EXPECT_EQ(RebuildPause(0ms), 0ms);
  EXPECT_EQ(RebuildPause(8ms), 24ms);
  EXPECT_EQ(RebuildPause(100ms), 300ms);
  EXPECT_EQ(RebuildPause(250ms), kMaxRebuildPause);
  EXPECT_EQ(RebuildPause(10s), kMaxRebuildPause);
  // The share of time spent rebuilding under a steady stream of changes:
  // took / (took + pause) is at most 1 / (1 + factor) until the cap.
  for (auto took : {1ms, 10ms, 200ms}) {
    const double share = std::chrono::duration<double>(took).count() /
                         std::chrono::duration<double>(took + RebuildPause(took)).count();
    EXPECT_LE(share, 1.0 / (1 + kRebuildPauseFactor) + 1e-9);
  }
}

}  // namespace
}  // namespace switchboard::authorizer
