// The config index: which users a config Secret holds, since which config,
// and what a reloader's report means for one user.
#include "config_index.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "switchboard/api/constants.h"
#include "switchboard/operator_logic/conditions.h"
#include "switchboard/operator_logic/render.h"
#include "switchboard/testing/objects.h"

namespace switchboard::operator_controller {
namespace {

using logic = ::switchboard::operator_logic::ConfigLoad;
using std::chrono::milliseconds;
using std::chrono::seconds;

std::string Text(std::initializer_list<const char*> users) {
  std::string t = "authorization: {users: [\n";
  for (const char* u : users) {
    t += std::string("{user: \"") + u + "\", password: \"$2a$11$" + u + "\"}\n";
  }
  return t + "]}\n";
}

// A config Secret as the owned-Secrets cache keeps it.
SecretRecord Secret(const std::string& text, int rv, const std::string& reported = "") {
  testing::SecretBuilder s("nats", "shared-switchboard");
  s.Uid("u1").ResourceVersion(std::to_string(rv)).Data("switchboard.conf", text);
  if (!reported.empty()) s.Annotation(std::string(api::kLoadedConfigHashAnnotation), reported);
  return SecretRecordOf(s);
}

std::string E(const char* u) { return ConfigIndex::Entry(u, std::string("$2a$11$") + u); }

operator_logic::ConfigLoad Decide(ConfigIndex& index, const SecretRecord& secret, const char* user,
                                  std::chrono::steady_clock::time_point now) {
  auto f = index.LoadFacts(&secret, "switchboard.conf", E(user), now);
  f.patience = seconds(30);
  return operator_logic::DecideConfigLoad(f);
}

TEST(ConfigIndex, UsersKeepTheirFirstConfigAcrossVersions) {
  ConfigIndex index;
  const std::string v1 = Text({"a"}), v2 = Text({"a", "b"});
  SecretRecord s1 = Secret(v1, 1);
  auto users = index.Get(&s1, "switchboard.conf");
  ASSERT_EQ(users->size(), 1u);
  EXPECT_EQ(users->at(E("a")).order, 1u);
  SecretRecord s2 = Secret(v2, 2);
  users = index.Get(&s2, "switchboard.conf");
  ASSERT_EQ(users->size(), 2u);
  EXPECT_EQ(users->at(E("a")).order, 1u);
  EXPECT_EQ(users->at(E("b")).order, 2u);
  // A new version with the same content (a reloader's report): nothing moves.
  SecretRecord s3 = Secret(v2, 3, operator_logic::ConfigHash(v1));
  users = index.Get(&s3, "switchboard.conf");
  EXPECT_EQ(users->at(E("b")).order, 2u);
  // A user removed and added again counts from its return.
  SecretRecord s4 = Secret(Text({"b"}), 4), s5 = Secret(v2, 5);
  index.Get(&s4, "switchboard.conf");
  users = index.Get(&s5, "switchboard.conf");
  EXPECT_EQ(users->at(E("a")).order, 4u);
  EXPECT_EQ(users->at(E("b")).order, 2u);
}

TEST(ConfigIndex, ReportsDecideWhetherToProbe) {
  ConfigIndex index;
  const auto now = std::chrono::steady_clock::now() + seconds(1);
  const std::string v1 = Text({"a"}), v2 = Text({"a", "b"}), v3 = Text({"a", "b", "c"});
  const std::string h1 = operator_logic::ConfigHash(v1), h2 = operator_logic::ConfigHash(v2);
  SecretRecord s1 = Secret(v1, 1), s2 = Secret(v2, 2);
  index.Get(&s1, "switchboard.conf");
  index.Get(&s2, "switchboard.conf");
  // No reloader reports: probe.
  EXPECT_EQ(Decide(index, s2, "b", now), logic::kUnknown);
  // The server loaded v1: b (new in v2) waits, a is loaded.
  SecretRecord r1 = Secret(v2, 3, h1);
  EXPECT_EQ(Decide(index, r1, "b", now), logic::kPending);
  EXPECT_EQ(Decide(index, r1, "a", now), logic::kLoaded);
  // ... until the patience runs out.
  EXPECT_EQ(Decide(index, r1, "b", now + seconds(31)), logic::kUnknown);
  // v2 loaded: b is loaded.
  SecretRecord r2 = Secret(v2, 4, h2);
  EXPECT_EQ(Decide(index, r2, "b", now), logic::kLoaded);
  // v3 written, v2 still reported: b stays loaded (v2 carries it), c waits.
  SecretRecord s5 = Secret(v3, 5, h2);
  EXPECT_EQ(Decide(index, s5, "b", now), logic::kLoaded);
  EXPECT_EQ(Decide(index, s5, "c", now), logic::kPending);
  // A hash this process never saw (from before a restart): probe.
  SecretRecord s6 = Secret(v3, 6, "sha256:unknown");
  EXPECT_EQ(Decide(index, s6, "c", now), logic::kUnknown);
  // A user the Secret does not hold: nothing reported.
  EXPECT_EQ(Decide(index, s6, "zz", now), logic::kUnknown);
  EXPECT_EQ(index.LoadFacts(nullptr, "switchboard.conf", E("a")).reported_hash, "");
}

TEST(ConfigIndex, AfterARestartEveryUserCountsFromTheFirstConfigSeen) {
  ConfigIndex index;  // a fresh process
  const std::string v2 = Text({"a", "b"});
  SecretRecord s = Secret(v2, 9, operator_logic::ConfigHash(v2));
  EXPECT_EQ(Decide(index, s, "a", std::chrono::steady_clock::now()), logic::kLoaded);
  EXPECT_EQ(Decide(index, s, "b", std::chrono::steady_clock::now()), logic::kLoaded);
}

// The render's verdicts: a backend learns whether (and why) it was left
// out; only a changed verdict wakes a backend, however often the server
// renders.
TEST(ConfigIndex, RenderVerdictsWakeOnlyTheBackendsWhoseVerdictChanged) {
  ConfigIndex index;
  EXPECT_FALSE(index.VerdictOn("nats/shared", "team-a/x", "u").rendered)
      << "nothing is known before the server's first render";
  using operator_logic::Rejected;
  const std::string_view full = operator_logic::reasons::kConfigFull;
  const std::string_view bad = operator_logic::reasons::kRenderRejected;
  std::vector<Rejected> first = {
      {"team-a", "x", "spec.nats.serverRef", "the file is full", "", full},
      {"team-b", "y", "spec.nats.credentials.username", "taken", "y-r1", bad},
  };
  auto changed = index.RecordRender("nats/shared", first);
  EXPECT_EQ(changed, (std::vector<std::string>{"team-a/x", "team-b/y"}));
  auto a = index.VerdictOn("nats/shared", "team-a/x", "x");
  EXPECT_TRUE(a.rendered);
  ASSERT_TRUE(a.left_out.has_value());
  EXPECT_EQ(a.left_out->reason, full);
  EXPECT_EQ(a.left_out->message, "spec.nats.serverRef: the file is full");
  // Only the user the render left out counts: team-b/y's old user is in.
  EXPECT_FALSE(index.VerdictOn("nats/shared", "team-b/y", "y").left_out.has_value());
  EXPECT_TRUE(index.VerdictOn("nats/shared", "team-b/y", "y-r1").left_out.has_value());
  EXPECT_FALSE(index.VerdictOn("nats/shared", "team-c/z", "z").left_out.has_value());
  EXPECT_FALSE(index.VerdictOn("nats/other", "team-a/x", "x").rendered);

  // The same verdicts again: nobody to wake.
  EXPECT_TRUE(index.RecordRender("nats/shared", first).empty());
  // team-a/x is back in, team-b/y has another message, team-c/z is new.
  std::vector<Rejected> second = {
      {"team-b", "y", "spec.nats.credentials.username", "taken by another", "y-r1", bad},
      {"team-c", "z", "spec.nats.serverRef", "the file is full", "", full},
  };
  changed = index.RecordRender("nats/shared", second);
  std::sort(changed.begin(), changed.end());
  EXPECT_EQ(changed, (std::vector<std::string>{"team-a/x", "team-b/y", "team-c/z"}));
  EXPECT_FALSE(index.VerdictOn("nats/shared", "team-a/x", "x").left_out.has_value());

  index.ForgetRender("nats/shared");
  EXPECT_FALSE(index.VerdictOn("nats/shared", "team-c/z", "z").rendered);
}

TEST(ConfigIndex, LoadFactsSayHowLongAUserHasBeenInTheFileWithoutAReport) {
  ConfigIndex index;
  const auto t0 = std::chrono::steady_clock::now();
  SecretRecord s1 = Secret(Text({"a"}), 1);
  index.Get(&s1, "switchboard.conf");
  SecretRecord s2 = Secret(Text({"a", "b"}), 2);
  auto f = index.LoadFacts(&s2, "switchboard.conf", E("b"), t0 + seconds(3600));
  EXPECT_EQ(f.reported_hash, "");
  EXPECT_EQ(f.user_order, 2u);
  EXPECT_GE(f.user_waiting, seconds(3599));
  EXPECT_EQ(index.LoadFacts(&s2, "switchboard.conf", E("zz")).user_waiting, milliseconds(0));
}

}  // namespace
}  // namespace switchboard::operator_controller
