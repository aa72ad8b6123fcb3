// Nothing invisible: every reason the render leaves an installation (or its
// next user) out for reaches the backend's status as Ready=False with that
// reason and the render's message, with one Warning event, and recomputing
// the same verdict writes and records nothing more.
#include <gtest/gtest.h>

#include "switchboard/operator_logic/backend_policy.h"
#include "switchboard/operator_logic/conditions.h"
#include "switchboard/operator_logic/render.h"

namespace switchboard::operator_logic {
namespace {

using json = nlohmann::json;

std::string FakeHash(char c) { return "$2b$06$" + std::string(53, c); }

RenderInput Base() {
  RenderInput in;
  in.server_ns = "nats";
  in.server_name = "shared";
  in.installations = {
      {"team-a", "first", "hatchet.a", {{"team-a-first", FakeHash('a')}}, 1792000000}};
  return in;
}

// The controller's path for one backend: the render's verdict on its probe
// user, DecideInFile, then the status and its event.
struct Outcome {
  InFileStep step;
  json status;
  std::optional<StatusEvent> event;
};
Outcome Report(const RenderedConfig& r, const std::string& ns, const std::string& name,
               const std::string& probe_user, const json& previous) {
  InFileFacts f;
  f.server = "nats/shared";
  f.config_secret = "shared-switchboard";
  f.server_rendered = true;
  f.has_status = previous.is_object() && previous.contains("conditions");
  for (const auto& rej : r.rejected) {
    if (rej.ns == ns && rej.name == name && (rej.user.empty() || rej.user == probe_user)) {
      f.left_out = LeftOut{std::string(rej.reason), rej.field + ": " + rej.message};
      break;
    }
  }
  Outcome o;
  o.step = DecideInFile(f);
  BackendStatusInput in;
  in.generation = 1;
  in.steps = {{Step::kValidate, true, "", ""},
              {Step::kResolveServer, true, "", ""},
              {Step::kCredentials, true, "", ""},
              {Step::kEnvSecret, true, "", ""}};
  if (o.step.step == InFile::kLeftOut || o.step.step == InFile::kReport) {
    in.steps.push_back({Step::kRenderConfig, false, o.step.reason, o.step.message});
  }
  o.status = ComputeBackendStatus(previous, in, "2026-12-01T00:00:00Z");
  o.event = ReadyTransitionEvent(previous, o.status);
  return o;
}

TEST(RenderVerdict, EveryReasonReachesTheBackendsStatusOnce) {
  struct Case {
    const char* name;
    Installation inst;
    std::string probe_user;
    std::string_view reason;
    std::string field;
    std::string says;  // part of the message
  } cases[] = {
      {"a prefix the file cannot carry",
       {"team-b", "x", "hatchet.b.*", {{"b", FakeHash('b')}}},
       "b",
       reasons::kRenderRejected,
       "spec.nats.subjectPrefix",
       "spec.nats.subjectPrefix: "},
      {"a prefix another installation has",
       {"team-b", "x", "hatchet.a", {{"b", FakeHash('b')}}},
       "b",
       reasons::kRenderRejected,
       "spec.nats.subjectPrefix",
       "already used by team-a/first"},
      {"a user name another installation has",
       {"team-b", "x", "hatchet.b", {{"team-a-first", FakeHash('b')}}},
       "team-a-first",
       reasons::kRenderRejected,
       "spec.nats.credentials.username",
       "already used by team-a/first"},
      {"a user name the file cannot carry",
       {"team-b", "x", "hatchet.b", {{"b b", FakeHash('b')}}},
       "b b",
       reasons::kRenderRejected,
       "spec.nats.credentials.username",
       "spec.nats.credentials.username: "},
      {"a stored hash that is not bcrypt (never echoed)",
       {"team-b", "x", "hatchet.b", {{"b", "plaintext"}}},
       "b",
       reasons::kRenderRejected,
       "spec.nats.credentials",
       "is not bcrypt"},
      {"a rotation's new user another installation has (the old one stays)",
       {"team-b", "x", "hatchet.b", {{"team-a-first", FakeHash('c')}, {"b", FakeHash('b')}}},
       "team-a-first",
       reasons::kRenderRejected,
       "spec.nats.credentials.username",
       "already used by team-a/first"},
  };
  for (const auto& c : cases) {
    RenderInput in = Base();
    in.installations.push_back(c.inst);
    auto r = RenderNatsConfig(in);
    ASSERT_TRUE(r.ok()) << c.name;
    ASSERT_FALSE(r->rejected.empty()) << c.name;
    EXPECT_EQ(r->rejected[0].reason, c.reason) << c.name;
    EXPECT_EQ(r->rejected[0].field, c.field) << c.name;

    // A new backend (no status yet) gets one: Ready=False, the reason, the
    // render's message; one Warning event.
    Outcome first = Report(*r, "team-b", "x", c.probe_user, nullptr);
    EXPECT_EQ(first.step.step, InFile::kLeftOut) << c.name;
    auto conds = ConditionsFromJson(first.status["conditions"]);
    const Condition* ready = FindCondition(conds, condition_types::kReady);
    ASSERT_NE(ready, nullptr);
    EXPECT_EQ(ready->status, "False") << c.name;
    EXPECT_EQ(ready->reason, c.reason) << c.name;
    EXPECT_NE(ready->message.find(c.says), std::string::npos) << c.name << ": " << ready->message;
    EXPECT_EQ(ready->message.find("plaintext"), std::string::npos) << c.name;
    const Condition* rendered = FindCondition(conds, condition_types::kConfigRendered);
    ASSERT_NE(rendered, nullptr);
    EXPECT_EQ(rendered->reason, c.reason);
    ASSERT_TRUE(first.event.has_value()) << c.name;
    EXPECT_TRUE(first.event->warning);
    EXPECT_EQ(first.event->reason, c.reason);

    // The same verdict again (the server renders again, a resync): the
    // same status, no event: no write.
    Outcome again = Report(*r, "team-b", "x", c.probe_user, first.status);
    EXPECT_EQ(again.status, first.status) << c.name;
    EXPECT_FALSE(again.event.has_value()) << c.name;

    // The installation that kept the name or prefix is not blamed.
    Outcome kept = Report(*r, "team-a", "first", "team-a-first", nullptr);
    EXPECT_EQ(kept.step.step, InFile::kWait) << c.name;
  }
}

TEST(RenderVerdict, ConfigFullReachesTheBackendsStatusOnce) {
  RenderInput in = Base();
  const size_t one = RenderNatsConfig(in)->text.size();
  in.max_bytes = one + 10;  // room for team-a/first only
  in.reserve_bytes = 0;
  in.installations.push_back({"team-b", "x", "hatchet.b", {{"b", FakeHash('b')}}, 1793000000});
  auto r = RenderNatsConfig(in);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->installations, 1);
  ASSERT_EQ(r->rejected.size(), 1u);
  EXPECT_EQ(r->rejected[0].reason, reasons::kConfigFull);
  Outcome first = Report(*r, "team-b", "x", "b", nullptr);
  EXPECT_EQ(first.step.step, InFile::kLeftOut);
  EXPECT_EQ(first.step.reason, reasons::kConfigFull);
  EXPECT_NE(first.step.message.find("NatsServer nats/shared"), std::string::npos);
  EXPECT_NE(first.step.message.find(std::to_string(one + 10) + " bytes"), std::string::npos);
  ASSERT_TRUE(first.event.has_value());
  EXPECT_TRUE(first.event->warning);
  Outcome again = Report(*r, "team-b", "x", "b", first.status);
  EXPECT_EQ(again.status, first.status);
  EXPECT_FALSE(again.event.has_value());
}

}  // namespace
}  // namespace switchboard::operator_logic
