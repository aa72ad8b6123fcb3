#include "switchboard/operator_logic/rotation.h"

#include <gtest/gtest.h>

namespace switchboard::operator_logic {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

// Counting fakes: passwords pw1, pw2, ...; "hash" is a valid bcrypt string
// derived from the password so tests can tell which password it belongs to.
struct Fakes {
  int generated = 0;
  int hashed = 0;
  int verified = 0;
  int last_cost = 0;
  static std::string HashOf(std::string_view pw) {
    std::string body(pw.substr(0, 53));
    for (char& c : body) {
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '.';
    }
    body.resize(53, '.');
    return "$2b$11$" + body;
  }
  CredentialDeps Deps() {
    CredentialDeps d;
    d.generate_password = [this]() -> Result<std::string> {
      return "pw" + std::to_string(++generated);
    };
    d.hash = [this](std::string_view pw, int cost) -> Result<std::string> {
      ++hashed;
      last_cost = cost;
      return HashOf(pw);
    };
    d.verify = [this](std::string_view pw, std::string_view h) -> Result<bool> {
      ++verified;
      return HashOf(pw) == h;
    };
    return d;
  }
};

Time T(int seconds_after) {
  return ParseTime("2026-11-30T10:00:00Z").value() + seconds(seconds_after);
}

CredentialInputs Inputs(int now = 0) {
  CredentialInputs in;
  in.username = "team-a-hatchet";
  in.grace_period = minutes(10);
  in.now = T(now);
  return in;
}

// Runs one reconcile the way the controller does: plan, "write" the env
// Secret, probe (passes unless told otherwise), confirm. Returns the state
// the controller would persist and the env it wrote.
struct World {
  Fakes fakes;
  std::optional<CredentialState> stored;
  std::string env_username;
  std::string env_password;
  std::vector<NatsUser> rendered;

  CredentialPlan Reconcile(CredentialInputs in, bool probe_passes = true) {
    in.env_username = env_username;
    auto plan = PlanCredentials(stored, in, fakes.Deps());
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    CredentialPlan p = std::move(plan).value();
    // Notes go into events and logs: never a password.
    if (!p.state.current.password.empty()) {
      EXPECT_EQ(p.note.find(p.state.current.password), std::string::npos) << p.note;
    }
    if (p.state.previous && !p.state.previous->password.empty()) {
      EXPECT_EQ(p.note.find(p.state.previous->password), std::string::npos) << p.note;
    }
    if (p.state_changed) stored = DecodeState(EncodeState(p.state)).value();
    env_username = p.env.username;
    env_password = p.env.password;
    rendered = p.users;
    // A server render of this backend from its stored Secret sees the same.
    if (stored) {
      auto from_secret = RenderedUsers(*stored);
      EXPECT_EQ(from_secret.size(), p.users.size());
      for (size_t i = 0; i < std::min(from_secret.size(), p.users.size()); ++i) {
        EXPECT_EQ(from_secret[i].username, p.users[i].username);
        EXPECT_EQ(from_secret[i].bcrypt, p.users[i].bcrypt);
      }
    }
    if (probe_passes && p.state.phase == RotationPhase::kStaged) {
      p = ConfirmStaged(p, in.now, in.grace_period);
      stored = DecodeState(EncodeState(p.state)).value();
      env_username = p.env.username;
      env_password = p.env.password;
    }
    return p;
  }
  std::vector<std::string> RenderedNames() const {
    std::vector<std::string> out;
    for (const auto& u : rendered) out.push_back(u.username);
    return out;
  }
};

TEST(Rotation, FirstReconcileGeneratesAndHashesOnce) {
  World w;
  auto p = w.Reconcile(Inputs());
  EXPECT_TRUE(p.state_changed);
  EXPECT_EQ(w.fakes.generated, 1);
  EXPECT_EQ(w.fakes.hashed, 1);
  EXPECT_EQ(p.env.username, "team-a-hatchet");
  EXPECT_EQ(p.env.password, "pw1");
  EXPECT_EQ(p.probe, p.env);
  ASSERT_EQ(p.users.size(), 1u);
  EXPECT_EQ(p.users[0].bcrypt, Fakes::HashOf("pw1"));
  EXPECT_EQ(p.state.phase, RotationPhase::kNone);
  EXPECT_NE(p.note.find("created"), std::string::npos);
}

TEST(Rotation, SteadyStateNeverHashesOrWrites) {
  World w;
  w.Reconcile(Inputs());
  for (int i = 1; i <= 5; ++i) {
    auto p = w.Reconcile(Inputs(i * 60));
    EXPECT_FALSE(p.state_changed);
    EXPECT_TRUE(p.note.empty());
  }
  EXPECT_EQ(w.fakes.hashed, 1);
  EXPECT_EQ(w.fakes.generated, 1);
  EXPECT_EQ(w.fakes.verified, 0);
}

TEST(Rotation, TokenPresentAtCreationDoesNotRotate) {
  World w;
  auto in = Inputs();
  in.rotate_token = "2026-11-29";
  w.Reconcile(in);
  auto p = w.Reconcile(in);
  EXPECT_EQ(p.state.phase, RotationPhase::kNone);
  EXPECT_EQ(w.fakes.generated, 1);
}

TEST(Rotation, FullCycleByGracePeriodNeverCutsTheOldUserEarly) {
  World w;
  w.Reconcile(Inputs());
  auto in = Inputs(100);
  in.rotate_token = "t1";

  // Probe of the new user fails (server has not reloaded yet): Staged, env
  // keeps the old credentials, both users rendered.
  auto p = w.Reconcile(in, /*probe_passes=*/false);
  EXPECT_EQ(p.state.phase, RotationPhase::kStaged);
  EXPECT_EQ(w.env_username, "team-a-hatchet");
  EXPECT_EQ(w.env_password, "pw1");
  EXPECT_EQ(p.probe.username, "team-a-hatchet-r1");
  EXPECT_EQ(p.probe.password, "pw2");
  EXPECT_EQ(w.RenderedNames(), (std::vector<std::string>{"team-a-hatchet-r1", "team-a-hatchet"}));
  EXPECT_EQ(RotationStatus(p.state)["phase"], "Staged");

  // Still failing: nothing new is generated.
  w.Reconcile(in, false);
  EXPECT_EQ(w.fakes.generated, 2);
  EXPECT_EQ(w.fakes.hashed, 2);

  // Probe passes: Retiring, env switches, the old user stays for the grace.
  in.now = T(200);
  p = w.Reconcile(in);
  EXPECT_EQ(p.state.phase, RotationPhase::kRetiring);
  EXPECT_EQ(w.env_username, "team-a-hatchet-r1");
  EXPECT_EQ(w.env_password, "pw2");
  ASSERT_TRUE(p.requeue_at.has_value());
  EXPECT_EQ(FormatTime(*p.requeue_at), "2026-11-30T10:13:20Z");
  EXPECT_EQ(RotationStatus(p.state)["retiresAt"], "2026-11-30T10:13:20Z");
  EXPECT_EQ(w.RenderedNames().size(), 2u);

  // Before the grace period ends: unchanged.
  in.now = T(200 + 599);
  p = w.Reconcile(in);
  EXPECT_EQ(p.state.phase, RotationPhase::kRetiring);
  EXPECT_FALSE(p.state_changed);
  EXPECT_EQ(w.RenderedNames().size(), 2u);

  // After: the old user goes.
  in.now = T(200 + 600);
  p = w.Reconcile(in);
  EXPECT_EQ(p.state.phase, RotationPhase::kNone);
  EXPECT_TRUE(p.state_changed);
  EXPECT_EQ(w.RenderedNames(), (std::vector<std::string>{"team-a-hatchet-r1"}));
  EXPECT_TRUE(RotationStatus(p.state).is_null());
  EXPECT_NE(p.note.find("team-a-hatchet removed"), std::string::npos);

  // And it stays done.
  p = w.Reconcile(in);
  EXPECT_FALSE(p.state_changed);
  EXPECT_EQ(w.fakes.hashed, 2);
}

TEST(Rotation, AcknowledgementRetiresAtOnceButOnlyForTheCurrentToken) {
  World w;
  w.Reconcile(Inputs());
  auto in = Inputs(10);
  in.rotate_token = "t1";
  in.ack_token = "t0";  // stale acknowledgement of an older rotation
  w.Reconcile(in);
  auto p = w.Reconcile(in);
  EXPECT_EQ(p.state.phase, RotationPhase::kRetiring);
  in.ack_token = "t1";
  p = w.Reconcile(in);
  EXPECT_EQ(p.state.phase, RotationPhase::kNone);
  EXPECT_NE(p.note.find("acknowledged"), std::string::npos);
}

TEST(Rotation, NothingRetiresUntilTheEnvSecretNamesTheNewUser) {
  World w;
  w.Reconcile(Inputs());
  auto in = Inputs(10);
  in.rotate_token = "t1";
  in.ack_token = "t1";
  w.Reconcile(in);  // Staged -> Retiring in one reconcile (probe passed)
  ASSERT_EQ(w.stored->phase, RotationPhase::kRetiring);
  // The env Secret write was lost (e.g. the API server failed it).
  w.env_username = "team-a-hatchet";
  in.now = T(10 + 3600);
  auto p = w.Reconcile(in);
  EXPECT_EQ(p.state.phase, RotationPhase::kRetiring) << "old user must stay: engines have it";
  EXPECT_EQ(p.env.username, "team-a-hatchet-r1") << "the env Secret is rewritten";
  p = w.Reconcile(in);
  EXPECT_EQ(p.state.phase, RotationPhase::kNone);
}

TEST(Rotation, NewTokenDuringARotationStartsTheNextOneAfterIt) {
  World w;
  w.Reconcile(Inputs());
  auto in = Inputs(10);
  in.rotate_token = "t1";
  w.Reconcile(in);
  in.rotate_token = "t2";
  auto p = w.Reconcile(in);
  EXPECT_EQ(p.state.current.username, "team-a-hatchet-r1") << "no second rotation mid-way";
  EXPECT_EQ(w.fakes.generated, 2);
  in.now = T(10 + 601);
  p = w.Reconcile(in);  // r1 retires r0, then t2 stages r2 in the same step
  EXPECT_EQ(p.state.current.username, "team-a-hatchet-r2");
  EXPECT_EQ(p.state.previous->username, "team-a-hatchet-r1");
  EXPECT_EQ(p.state.rotation_count, 2);
  EXPECT_EQ(w.RenderedNames(),
            (std::vector<std::string>{"team-a-hatchet-r2", "team-a-hatchet-r1"}));
}

TEST(Rotation, ExternalPasswordChangeIsStagedUnderANewUser) {
  World w;
  auto in = Inputs();
  in.external_password = "user-pw-1";
  auto p = w.Reconcile(in);
  EXPECT_EQ(w.fakes.generated, 0);
  EXPECT_EQ(p.env.password, "user-pw-1");
  EXPECT_EQ(w.stored->current.password, "user-pw-1") << "copy kept to detect changes cheaply";
  p = w.Reconcile(in);
  EXPECT_FALSE(p.state_changed);
  EXPECT_EQ(w.fakes.hashed, 1);

  in.external_password = "user-pw-2";
  p = w.Reconcile(in, /*probe_passes=*/false);
  EXPECT_EQ(p.state.phase, RotationPhase::kStaged);
  EXPECT_EQ(p.env.password, "user-pw-1") << "engines keep the old password until the server "
                                            "accepts the new one";
  EXPECT_EQ(p.probe.username, "team-a-hatchet-r1");
  EXPECT_EQ(p.probe.password, "user-pw-2");
  EXPECT_EQ(w.fakes.hashed, 2);
}

TEST(Rotation, RotateAnnotationIsIgnoredForExternalPasswords) {
  World w;
  auto in = Inputs();
  in.external_password = "user-pw-1";
  w.Reconcile(in);
  in.rotate_token = "t1";
  auto p = w.Reconcile(in);
  EXPECT_EQ(p.state.phase, RotationPhase::kNone);
  EXPECT_NE(p.note.find("passwordSecretRef"), std::string::npos);
}

TEST(Rotation, AdoptedExternalCredentialsAreVerifiedOnce) {
  World w;
  CredentialState adopted;
  adopted.current = {"team-a-hatchet", "", Fakes::HashOf("user-pw-1")};
  w.stored = adopted;
  auto in = Inputs();
  in.external_password = "user-pw-1";
  auto p = w.Reconcile(in);
  EXPECT_EQ(w.fakes.verified, 1);
  EXPECT_EQ(w.fakes.hashed, 0) << "the hash matched: no re-hash";
  EXPECT_TRUE(p.state_changed);
  EXPECT_EQ(p.state.phase, RotationPhase::kNone);
  w.Reconcile(in);
  EXPECT_EQ(w.fakes.verified, 1) << "the copy now makes verification unnecessary";

  // A different password in the user's Secret: verification fails, staged.
  World w2;
  w2.stored = adopted;
  in.external_password = "user-pw-9";
  p = w2.Reconcile(in, false);
  EXPECT_EQ(w2.fakes.verified, 1);
  EXPECT_EQ(p.state.phase, RotationPhase::kStaged);
  EXPECT_EQ(p.env.password, "user-pw-9") << "the old password is unknown: nothing else to give";
}

TEST(Rotation, UsernameChangeInTheSpecIsStaged) {
  World w;
  w.Reconcile(Inputs());
  auto in = Inputs(5);
  in.username = "renamed";
  auto p = w.Reconcile(in, false);
  EXPECT_EQ(p.state.phase, RotationPhase::kStaged);
  EXPECT_EQ(p.state.current.username, "renamed");
  EXPECT_EQ(p.state.previous->username, "team-a-hatchet");
  EXPECT_EQ(p.env.username, "team-a-hatchet");
}

TEST(Rotation, ErrorsAreValues) {
  World w;
  auto in = Inputs();
  in.username = "";
  EXPECT_FALSE(PlanCredentials(std::nullopt, in, w.fakes.Deps()).ok());
  in = Inputs();
  in.external_password = "";
  EXPECT_FALSE(PlanCredentials(std::nullopt, in, w.fakes.Deps()).ok());
  // Generated mode with a state that lost its password.
  CredentialState broken;
  broken.current = {"team-a-hatchet", "", Fakes::HashOf("x")};
  auto r = PlanCredentials(broken, Inputs(), w.fakes.Deps());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("\"password\""), std::string::npos);
  // CSPRNG failure propagates.
  CredentialDeps deps = w.fakes.Deps();
  deps.generate_password = []() -> Result<std::string> { return Status::Internal("no entropy"); };
  r = PlanCredentials(std::nullopt, Inputs(), deps);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
}

TEST(State, EncodeDecodeRoundTripAndKeys) {
  CredentialState s;
  s.current = {"u-r2", "pw2", Fakes::HashOf("pw2")};
  s.previous = Credentials{"u-r1", "pw1", Fakes::HashOf("pw1")};
  s.phase = RotationPhase::kRetiring;
  s.rotation_count = 2;
  s.rotation_token = "tok";
  s.retires_at = T(600);
  SecretData d = EncodeState(s);
  EXPECT_EQ(d.at("username"), "u-r2");
  EXPECT_EQ(d.at("password"), "pw2");
  EXPECT_EQ(d.at("bcrypt"), Fakes::HashOf("pw2"));
  EXPECT_EQ(d.at("rotation-count"), "2");
  EXPECT_EQ(d.at("rotation-token"), "tok");
  EXPECT_EQ(d.at("rotation-phase"), "Retiring");
  EXPECT_EQ(d.at("previous-username"), "u-r1");
  EXPECT_EQ(d.at("previous-password"), "pw1");
  EXPECT_EQ(d.at("previous-bcrypt"), Fakes::HashOf("pw1"));
  EXPECT_EQ(d.at("retires-at"), "2026-11-30T10:10:00Z");
  auto back = DecodeState(d);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, s);

  CredentialState plain;
  plain.current = {"u", "pw", Fakes::HashOf("pw")};
  SecretData pd = EncodeState(plain);
  EXPECT_EQ(pd.size(), 4u);  // username, password, bcrypt, rotation-count
  EXPECT_EQ(DecodeState(pd).value(), plain);
}

TEST(State, DecodeRejectsCorruptionNamingTheKey) {
  const std::string h = Fakes::HashOf("pw");
  struct Case {
    SecretData data;
    std::string key;
  } cases[] = {
      {{{"bcrypt", h}}, "username"},
      {{{"username", "u"}}, "bcrypt"},
      {{{"username", "u"}, {"bcrypt", "plain"}}, "bcrypt"},
      {{{"username", "u"}, {"bcrypt", h}, {"rotation-count", "-1"}}, "rotation-count"},
      {{{"username", "u"}, {"bcrypt", h}, {"rotation-count", "x"}}, "rotation-count"},
      {{{"username", "u"}, {"bcrypt", h}, {"rotation-phase", "Done"}}, "rotation-phase"},
      {{{"username", "u"}, {"bcrypt", h}, {"rotation-phase", "Staged"}}, "previous-username"},
      {{{"username", "u"}, {"bcrypt", h}, {"rotation-phase", "Staged"}, {"previous-username", "p"}},
       "previous-bcrypt"},
      {{{"username", "u"},
        {"bcrypt", h},
        {"rotation-phase", "Retiring"},
        {"previous-username", "p"},
        {"previous-bcrypt", h}},
       "retires-at"},
  };
  for (const auto& c : cases) {
    auto r = DecodeState(c.data);
    ASSERT_FALSE(r.ok()) << c.key;
    EXPECT_NE(r.status().message().find("\"" + c.key + "\""), std::string::npos)
        << r.status().message();
    EXPECT_NE(r.status().message().find("delete the credentials Secret"), std::string::npos);
  }
}

TEST(RotatedUsername, Table) {
  EXPECT_EQ(RotatedUsername("u", 0), "u");
  EXPECT_EQ(RotatedUsername("u", 1), "u-r1");
  EXPECT_EQ(RotatedUsername("u", 12), "u-r12");
}

}  // namespace
}  // namespace switchboard::operator_logic

namespace switchboard::operator_logic {
namespace {

TEST(ConfirmStaged, OnlyMovesAStagedPlan) {
  Fakes fakes;
  CredentialInputs in;
  in.username = "u";
  in.now = ParseTime("2026-11-30T10:00:00Z").value();
  auto plan = PlanCredentials(std::nullopt, in, fakes.Deps()).value();
  ASSERT_EQ(plan.state.phase, RotationPhase::kNone);
  CredentialPlan same = ConfirmStaged(plan, in.now, std::chrono::minutes(10));
  EXPECT_EQ(same.state, plan.state);
  EXPECT_EQ(same.env, plan.env);
  EXPECT_EQ(RotationPhaseName(RotationPhase::kNone), "");
  EXPECT_EQ(RotationPhaseName(RotationPhase::kStaged), "Staged");
  EXPECT_EQ(RotationPhaseName(RotationPhase::kRetiring), "Retiring");
}

TEST(ConfirmStaged, RetiresAtIsWholeSecondsSoItSurvivesTheSecret) {
  Fakes fakes;
  CredentialInputs in;
  in.username = "u";
  in.now = ParseTime("2026-11-30T10:00:00Z").value();
  auto first = PlanCredentials(std::nullopt, in, fakes.Deps()).value();
  in.rotate_token = "t";
  auto staged = PlanCredentials(first.state, in, fakes.Deps()).value();
  ASSERT_EQ(staged.state.phase, RotationPhase::kStaged);
  auto retiring =
      ConfirmStaged(staged, in.now + std::chrono::milliseconds(1500), std::chrono::seconds(30));
  EXPECT_EQ(FormatTime(*retiring.state.retires_at), "2026-11-30T10:00:32Z");
  EXPECT_EQ(DecodeState(EncodeState(retiring.state)).value(), retiring.state);
  EXPECT_NE(retiring.note.find("retires at 2026-11-30T10:00:32Z"), std::string::npos);
  EXPECT_EQ(retiring.note.find(retiring.state.current.password), std::string::npos)
      << "notes go to events: never a password";
}

// AuthCallout: one user name, two passwords while the rotation runs.
TEST(Rotation, KeepUsernameChangesOnlyThePassword) {
  World w;
  auto in = Inputs();
  in.keep_username = true;
  w.Reconcile(in);
  in.now = T(100);
  in.rotate_token = "t1";

  auto p = w.Reconcile(in, /*probe_passes=*/false);
  EXPECT_EQ(p.state.phase, RotationPhase::kStaged);
  EXPECT_EQ(p.state.current.username, "team-a-hatchet");
  EXPECT_EQ(p.state.current.password, "pw2");
  EXPECT_EQ(p.state.rotation_count, 1);
  ASSERT_TRUE(p.state.previous.has_value());
  EXPECT_EQ(p.state.previous->username, "team-a-hatchet");
  EXPECT_EQ(p.state.previous->password, "pw1");
  EXPECT_EQ(w.env_password, "pw1") << "engines keep the old password until a probe passes";
  EXPECT_EQ(p.probe.password, "pw2");
  EXPECT_NE(p.note.find("new password for user team-a-hatchet"), std::string::npos) << p.note;
  // The stored state keeps both passwords and their hashes.
  const SecretData d = EncodeState(p.state);
  EXPECT_EQ(d.at("previous-username"), "team-a-hatchet");
  EXPECT_EQ(d.at("previous-password"), "pw1");
  EXPECT_EQ(d.at("previous-bcrypt"), Fakes::HashOf("pw1"));
  EXPECT_EQ(*w.stored, p.state);

  in.now = T(200);
  p = w.Reconcile(in);
  EXPECT_EQ(p.state.phase, RotationPhase::kRetiring);
  EXPECT_EQ(w.env_username, "team-a-hatchet");
  EXPECT_EQ(w.env_password, "pw2");
  EXPECT_EQ(FormatTime(*p.state.retires_at), "2026-11-30T10:13:20Z");
  EXPECT_NE(p.note.find("the old one retires at"), std::string::npos) << p.note;

  in.now = T(200 + 599);
  EXPECT_FALSE(w.Reconcile(in).state_changed);
  in.now = T(200 + 600);
  p = w.Reconcile(in);
  EXPECT_EQ(p.state.phase, RotationPhase::kNone);
  EXPECT_FALSE(p.state.previous.has_value());
  EXPECT_EQ(p.state.current.username, "team-a-hatchet");
  EXPECT_NE(p.note.find("old password of user team-a-hatchet retired"), std::string::npos)
      << p.note;

  // The next rotation keeps it too.
  in.rotate_token = "t2";
  p = w.Reconcile(in);
  EXPECT_EQ(p.state.current.username, "team-a-hatchet");
  EXPECT_EQ(p.state.rotation_count, 2);
  EXPECT_EQ(w.fakes.generated, 3);
}

// Switching a server between the modes starts no rotation: the stored name
// is the spec's or its -r<N>.
TEST(Rotation, SwitchingModesKeepsTheStoredName) {
  struct Case {
    const char* name;
    std::string stored_username;
    int count;
    bool keep_username;
  } cases[] = {
      {"IncludeFile -r2 user, now AuthCallout", "team-a-hatchet-r2", 2, true},
      {"AuthCallout user after rotations, now IncludeFile", "team-a-hatchet", 3, false},
      {"AuthCallout, never rotated", "team-a-hatchet", 0, true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    World w;
    CredentialState s;
    s.current = {c.stored_username, "pw0", Fakes::HashOf("pw0")};
    s.rotation_count = c.count;
    w.stored = s;
    w.env_username = c.stored_username;
    auto in = Inputs();
    in.keep_username = c.keep_username;
    auto p = w.Reconcile(in);
    EXPECT_FALSE(p.state_changed);
    EXPECT_EQ(p.state.phase, RotationPhase::kNone);
    EXPECT_EQ(p.env.username, c.stored_username);
    EXPECT_EQ(w.fakes.generated, 0);
  }
  // A file-mode rotation after AuthCallout's rotations takes the next -r<N>.
  World w;
  CredentialState s;
  s.current = {"team-a-hatchet", "pw0", Fakes::HashOf("pw0")};
  s.rotation_count = 3;
  w.stored = s;
  auto in = Inputs();
  in.rotate_token = "t";
  auto p = w.Reconcile(in, false);
  EXPECT_EQ(p.state.current.username, "team-a-hatchet-r4");
  EXPECT_EQ(p.state.previous->username, "team-a-hatchet");
}

}  // namespace

TEST(Rotation, OneBcryptPolicyGeneratedCheapUserSuppliedSlow) {
  World generated;
  generated.Reconcile(Inputs());
  EXPECT_EQ(generated.fakes.last_cost, kGeneratedPasswordBcryptCost);
  World external;
  auto in = Inputs();
  in.external_password = "user-pw-1";
  external.Reconcile(in);
  EXPECT_EQ(external.fakes.last_cost, kBcryptCost);
}

// Credentials Secrets in the older layout (no rotation-phase key):
// adopted with the same users and passwords (an upgrade changes nothing a
// running engine uses).
TEST(State, DecodesTheLegacyLayout) {
  const std::string h1 = Fakes::HashOf("pw1");
  const std::string h0 = Fakes::HashOf("pw0");
  struct Case {
    const char* name;
    SecretData data;
    RotationPhase phase;
    std::vector<std::string> users;
    bool due_now;
  } cases[] = {
      {"generated, never rotated (no rotation-count)",
       {{"username", "team-a-hatchet"}, {"password", "pw1"}, {"bcrypt", h1}},
       RotationPhase::kNone,
       {"team-a-hatchet"},
       false},
      {"external password: password-check instead of a copy",
       {{"username", "team-a-hatchet"}, {"bcrypt", h1}, {"password-check", "sha256:00"}},
       RotationPhase::kNone,
       {"team-a-hatchet"},
       false},
      {"rotated by the old operator: previous user without a phase, with retires-at",
       {{"username", "team-a-hatchet-r1"},
        {"password", "pw1"},
        {"bcrypt", h1},
        {"rotation-count", "1"},
        {"previous-username", "team-a-hatchet"},
        {"previous-bcrypt", h0},
        {"retires-at", "2026-11-30T10:10:00Z"}},
       RotationPhase::kRetiring,
       {"team-a-hatchet-r1", "team-a-hatchet"},
       false},
      {"rotated by the old operator without retires-at: due now",
       {{"username", "team-a-hatchet-r1"},
        {"password", "pw1"},
        {"bcrypt", h1},
        {"rotation-count", "1"},
        {"previous-username", "team-a-hatchet"},
        {"previous-bcrypt", h0}},
       RotationPhase::kRetiring,
       {"team-a-hatchet-r1", "team-a-hatchet"},
       true},
  };
  for (const auto& c : cases) {
    auto s = DecodeState(c.data);
    ASSERT_TRUE(s.ok()) << c.name << ": " << s.status().ToString();
    EXPECT_EQ(s->phase, c.phase) << c.name;
    std::vector<std::string> users;
    for (const auto& u : RenderedUsers(*s)) users.push_back(u.username);
    EXPECT_EQ(users, c.users) << c.name;
    if (c.phase == RotationPhase::kRetiring) {
      ASSERT_TRUE(s->retires_at.has_value()) << c.name;
      EXPECT_EQ(*s->retires_at <= T(0), c.due_now) << c.name;
    }
    EXPECT_EQ(s->current.password, c.data.count("password") ? c.data.at("password") : "") << c.name;
  }
}

}  // namespace switchboard::operator_logic
