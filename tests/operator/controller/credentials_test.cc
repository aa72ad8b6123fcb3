// The staged rotation state machine on the credentials Secret data (pure:
// no API server). The env Secret must never name a user the server may not
// have loaded, and the old user must stay rendered until it retires.
#include "credentials.h"

#include <gtest/gtest.h>

namespace switchboard::controller {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::system_clock;

RotationInputs Inputs(Clock::time_point now) {
  RotationInputs in;
  in.base_username = "team-a";
  in.subject = "hatchet.a.*";
  in.grace = 10min;
  in.now = now;
  return in;
}

std::vector<std::string> Names(const Credentials& c) {
  std::vector<std::string> out;
  for (const auto& u : c.users) out.push_back(u.username);
  return out;
}

TEST(StepCredentials, FirstProvisioningGeneratesAndHashesOnce) {
  SecretData data;
  const auto now = Clock::now();
  auto c = StepCredentials(&data, Inputs(now));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->username, "team-a");
  EXPECT_EQ(c->env_username, "team-a");
  EXPECT_FALSE(c->password.empty());
  EXPECT_EQ(c->env_password, c->password);
  EXPECT_TRUE(c->phase.empty());
  ASSERT_EQ(c->users.size(), 1u);
  EXPECT_EQ(c->users[0].bcrypt.rfind("$2", 0), 0u) << "a bcrypt hash";
  EXPECT_EQ(data["username"], "team-a");
  // Steady state: nothing changes, no re-hash.
  const SecretData before = data;
  auto again = StepCredentials(&data, Inputs(now));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(data, before);
  EXPECT_TRUE(again->events.empty());
}

TEST(StepCredentials, RotationIsStagedThenSwitchedThenRetired) {
  SecretData data;
  auto t0 = Clock::now();
  auto first = StepCredentials(&data, Inputs(t0));
  ASSERT_TRUE(first.ok());
  const std::string old_pw = first->password;

  auto in = Inputs(t0);
  in.rotate_token = "t1";
  in.env_username = "team-a";
  auto staged = StepCredentials(&data, in);
  ASSERT_TRUE(staged.ok());
  EXPECT_EQ(staged->phase, kPhaseStaged);
  EXPECT_EQ(staged->username, "team-a-r1") << "the probe uses the new user";
  EXPECT_NE(staged->password, old_pw);
  EXPECT_EQ(staged->env_username, "team-a") << "engines keep the old user while Staged";
  EXPECT_EQ(staged->env_password, old_pw);
  EXPECT_EQ(Names(*staged), (std::vector<std::string>{"team-a-r1", "team-a"}));
  EXPECT_TRUE(staged->retires_at.empty());
  ASSERT_EQ(staged->events.size(), 1u);
  EXPECT_EQ(staged->events[0].first, "RotationStaged");
  EXPECT_EQ(staged->events[0].second.find(old_pw), std::string::npos) << "no secret in events";
  EXPECT_EQ(staged->events[0].second.find(staged->password), std::string::npos);

  // Still Staged on the next reconcile, however late (no probe passed yet).
  in.now = t0 + 1h;
  auto still = StepCredentials(&data, in);
  ASSERT_TRUE(still.ok());
  EXPECT_EQ(still->phase, kPhaseStaged);
  EXPECT_EQ(still->env_username, "team-a");
  EXPECT_EQ(still->password, staged->password) << "no new password per reconcile";

  // The probe with the new user passed.
  auto t1 = t0 + 1min;
  Credentials switched = ConfirmStagedData(&data, "team-a", "hatchet.a.*", t1, 10min);
  EXPECT_EQ(switched.phase, kPhaseRetiring);
  EXPECT_EQ(switched.env_username, "team-a-r1");
  EXPECT_EQ(switched.env_password, staged->password);
  EXPECT_EQ(Names(switched), (std::vector<std::string>{"team-a-r1", "team-a"}));
  EXPECT_EQ(switched.retires_at, FormatRfc3339(t1 + 10min));
  EXPECT_EQ(data.count("previous-password"), 0u) << "the old password is no longer kept";

  // Before retiresAt: both users stay.
  in.now = t1 + 5min;
  in.env_username = "team-a-r1";
  auto retiring = StepCredentials(&data, in);
  ASSERT_TRUE(retiring.ok());
  EXPECT_EQ(retiring->phase, kPhaseRetiring);
  EXPECT_EQ(retiring->users.size(), 2u);

  // Due, but the env Secret still names the old user: wait.
  in.now = t1 + 11min;
  in.env_username = "team-a";
  auto waiting = StepCredentials(&data, in);
  ASSERT_TRUE(waiting.ok());
  EXPECT_EQ(waiting->phase, kPhaseRetiring);

  in.env_username = "team-a-r1";
  auto done = StepCredentials(&data, in);
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(done->phase.empty());
  EXPECT_EQ(Names(*done), (std::vector<std::string>{"team-a-r1"}));
  EXPECT_EQ(done->env_username, "team-a-r1");
  ASSERT_EQ(done->events.size(), 1u);
  EXPECT_EQ(done->events[0].first, "RotationCompleted");
  EXPECT_EQ(data.count("previous-username"), 0u);
  EXPECT_EQ(data.count("rotation-phase"), 0u);
}

TEST(StepCredentials, AcknowledgementRetiresEarly) {
  SecretData data;
  auto t0 = Clock::now();
  ASSERT_TRUE(StepCredentials(&data, Inputs(t0)).ok());
  auto in = Inputs(t0);
  in.rotate_token = "t1";
  ASSERT_TRUE(StepCredentials(&data, in).ok());
  // An ack while Staged does nothing: engines cannot have moved yet.
  in.ack_token = "t1";
  in.env_username = "team-a";
  auto staged = StepCredentials(&data, in);
  ASSERT_TRUE(staged.ok());
  EXPECT_EQ(staged->phase, kPhaseStaged);
  ConfirmStagedData(&data, "team-a", "hatchet.a.*", t0, 10min);
  in.env_username = "team-a-r1";
  auto done = StepCredentials(&data, in);
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(done->phase.empty());
}

TEST(StepCredentials, AckForAnotherTokenAndConfirmOutsideStagedChangeNothing) {
  SecretData data;
  auto t0 = Clock::now();
  ASSERT_TRUE(StepCredentials(&data, Inputs(t0)).ok());
  SecretData steady = data;
  Credentials c = ConfirmStagedData(&data, "team-a", "hatchet.a.*", t0, 10min);
  EXPECT_EQ(data, steady) << "no rotation: nothing to confirm";
  EXPECT_TRUE(c.phase.empty());

  auto in = Inputs(t0);
  in.rotate_token = "t1";
  ASSERT_TRUE(StepCredentials(&data, in).ok());
  ConfirmStagedData(&data, "team-a", "hatchet.a.*", t0, 10min);
  SecretData retiring = data;
  ConfirmStagedData(&data, "team-a", "hatchet.a.*", t0 + 5min, 10min);
  EXPECT_EQ(data, retiring) << "a second confirm does not move retiresAt";
  in.ack_token = "t0";
  in.env_username = "team-a-r1";
  auto c2 = StepCredentials(&data, in);
  ASSERT_TRUE(c2.ok());
  EXPECT_EQ(c2->phase, kPhaseRetiring) << "the ack names another rotation";
}

TEST(StepCredentials, TokenDuringRotationWaitsForIt) {
  SecretData data;
  auto t0 = Clock::now();
  ASSERT_TRUE(StepCredentials(&data, Inputs(t0)).ok());
  auto in = Inputs(t0);
  in.rotate_token = "t1";
  ASSERT_TRUE(StepCredentials(&data, in).ok());
  in.rotate_token = "t2";
  auto held = StepCredentials(&data, in);
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(held->username, "team-a-r1");
  EXPECT_EQ(held->users.size(), 2u) << "never three users, never a skipped stage";
  ConfirmStagedData(&data, "team-a", "hatchet.a.*", t0, 10min);
  in.now = t0 + 11min;
  in.env_username = "team-a-r1";
  auto next = StepCredentials(&data, in);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->phase, kPhaseStaged) << "t2 starts once t1 is done";
  EXPECT_EQ(next->username, "team-a-r2");
  EXPECT_EQ(next->env_username, "team-a-r1");
  EXPECT_EQ(Names(*next), (std::vector<std::string>{"team-a-r2", "team-a-r1"}));
}

TEST(StepCredentials, SecretFromAnOlderOperatorKeepsItsPasswords) {
  // Written by the operator that switched the env Secret at once: no
  // rotation-phase, no previous-password. Reads as Retiring; nothing is
  // regenerated or re-hashed.
  const auto t0 = Clock::now();
  SecretData data{{"username", "team-a-r1"},
                  {"password", "p1"},
                  {"bcrypt", "$2a$06$hash1"},
                  {"rotation-count", "1"},
                  {"rotation-token", "t1"},
                  {"previous-username", "team-a"},
                  {"previous-bcrypt", "$2a$06$hash0"},
                  {"retires-at", FormatRfc3339(t0 + 5min)}};
  const SecretData before = data;
  auto in = Inputs(t0);
  in.rotate_token = "t1";
  in.env_username = "team-a-r1";
  auto c = StepCredentials(&data, in);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(data, before);
  EXPECT_EQ(c->phase, kPhaseRetiring);
  EXPECT_EQ(c->env_username, "team-a-r1");
  EXPECT_EQ(c->env_password, "p1");
  EXPECT_EQ(c->users[0].bcrypt, "$2a$06$hash1");
  EXPECT_EQ(c->users[1].bcrypt, "$2a$06$hash0");
}

TEST(StepCredentials, ExternalPasswordIsNotRotatedByAnnotation) {
  SecretData data{{"bcrypt", "$2a$11$ext"}, {"password-check", "sha256:x"}};
  auto in = Inputs(Clock::now());
  in.external = true;
  in.rotate_token = "t1";
  auto c = StepCredentials(&data, in);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->phase.empty());
  EXPECT_EQ(c->username, "team-a");
  EXPECT_EQ(data.count("password"), 0u) << "never stores a referenced password";
  ASSERT_EQ(c->events.size(), 1u);
  EXPECT_EQ(c->events[0].first, "RotationNotSupported");
}

}  // namespace
}  // namespace switchboard::controller
