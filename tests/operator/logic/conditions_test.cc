#include "switchboard/operator_logic/conditions.h"

#include <gtest/gtest.h>

namespace switchboard::operator_logic {
namespace {

using nlohmann::json;

TEST(SetCondition, KeepsTransitionTimeWhenStatusUnchanged) {
  std::vector<Condition> cs;
  EXPECT_TRUE(SetCondition(cs, {"Ready", "False", "AuthFailed", "m1", 1, ""}, "T1"));
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].last_transition_time, "T1");
  // Same status, new reason/message: changed, time kept.
  EXPECT_TRUE(SetCondition(cs, {"Ready", "False", "ServerUnreachable", "m2", 1, ""}, "T2"));
  EXPECT_EQ(cs[0].last_transition_time, "T1");
  EXPECT_EQ(cs[0].reason, "ServerUnreachable");
  // Identical: not changed.
  EXPECT_FALSE(SetCondition(cs, {"Ready", "False", "ServerUnreachable", "m2", 1, ""}, "T3"));
  EXPECT_EQ(cs[0].last_transition_time, "T1");
  // New generation only: changed, time kept.
  EXPECT_TRUE(SetCondition(cs, {"Ready", "False", "ServerUnreachable", "m2", 2, ""}, "T4"));
  EXPECT_EQ(cs[0].last_transition_time, "T1");
  // Status flips: new time.
  EXPECT_TRUE(SetCondition(cs, {"Ready", "True", "Probed", "ok", 2, ""}, "T5"));
  EXPECT_EQ(cs[0].last_transition_time, "T5");
  // Another type is appended.
  EXPECT_TRUE(SetCondition(cs, {"Probed", "True", "Succeeded", "", 2, ""}, "T6"));
  EXPECT_EQ(cs.size(), 2u);
  EXPECT_EQ(FindCondition(cs, "Probed")->last_transition_time, "T6");
  EXPECT_EQ(FindCondition(cs, "Nope"), nullptr);
}

TEST(Conditions, JsonRoundTripAndLenientParsing) {
  Condition c{"Ready", "True", "Probed", "ok", 3, "2026-11-30T10:00:00Z"};
  json j = ToJson(c);
  EXPECT_EQ(j["observedGeneration"], 3);
  EXPECT_EQ(j["lastTransitionTime"], "2026-11-30T10:00:00Z");
  auto back = ConditionFromJson(j);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->reason, "Probed");
  auto list = ConditionsFromJson(json::array({j, 42, json::object(), {{"type", "X"}}}));
  EXPECT_EQ(list.size(), 1u);
  EXPECT_TRUE(ConditionsFromJson("garbage").empty());
}

std::vector<StepResult> AllOk() {
  return {{Step::kValidate, true, "", ""},    {Step::kResolveServer, true, "", ""},
          {Step::kCredentials, true, "", ""}, {Step::kRenderConfig, true, "", ""},
          {Step::kEnvSecret, true, "", ""},   {Step::kProbe, true, "", "round trip 2 ms"}};
}

TEST(BackendStatus, ReadyNatsHasEveryField) {
  BackendStatusInput in;
  in.generation = 4;
  in.steps = AllOk();
  in.env_secret_name = "hatchet-pubsub-env";
  in.env_secret_hash = "sha256:abc";
  in.subject = "hatchet.team-a.*";
  in.username = "team-a-hatchet";
  in.server_max_payload = 16777216;
  in.last_probe_time = "2026-11-30T10:00:00Z";
  json s = ComputeBackendStatus(nullptr, in, "T1");
  EXPECT_EQ(s["observedGeneration"], 4);
  EXPECT_EQ(s["envSecretName"], "hatchet-pubsub-env");
  EXPECT_EQ(s["envSecretHash"], "sha256:abc");
  EXPECT_EQ(s["subject"], "hatchet.team-a.*");
  EXPECT_EQ(s["username"], "team-a-hatchet");
  EXPECT_EQ(s["serverMaxPayload"], 16777216);
  EXPECT_FALSE(s.contains("rotation"));
  EXPECT_FALSE(s.contains("limits")) << "no limits apply: none shown";
  in.limits = {{"maxConnections", 10}};
  EXPECT_EQ(ComputeBackendStatus(nullptr, in, "T1")["limits"], (json{{"maxConnections", 10}}));
  EXPECT_FALSE(s.contains("account")) << "not in operator mode: no account shown";
  in.account = "ACZSWBJ4SYILK7QVDELO64VX3EFWB6CXCPMEBN3A4C6WTQA4OZTQGHU2";
  EXPECT_EQ(ComputeBackendStatus(nullptr, in, "T1")["account"], in.account);
  auto cs = ConditionsFromJson(s["conditions"]);
  ASSERT_EQ(cs.size(), 5u);
  EXPECT_EQ(cs[0].type, "Ready");
  EXPECT_EQ(cs[0].status, "True");
  EXPECT_EQ(cs[0].reason, "Probed");
  for (const auto& c : cs) {
    EXPECT_EQ(c.observed_generation, 4);
    EXPECT_EQ(c.status, "True") << c.type;
  }
  EXPECT_EQ(FindCondition(cs, "Probed")->message, "round trip 2 ms");
}

TEST(BackendStatus, FailureTable) {
  struct Case {
    Step failing;
    std::string reason;
    std::string failed_condition;  // "" when only Ready says it
    std::vector<std::string> pending;
  } cases[] = {
      {Step::kValidate,
       "InvalidSpec",
       "",
       {"CredentialsReady", "ConfigRendered", "EnvSecretReady", "Probed"}},
      {Step::kResolveServer,
       "NamespaceNotAllowed",
       "",
       {"CredentialsReady", "ConfigRendered", "EnvSecretReady", "Probed"}},
      {Step::kCredentials,
       "CredentialsNotFound",
       "CredentialsReady",
       {"ConfigRendered", "EnvSecretReady", "Probed"}},
      {Step::kRenderConfig, "ConfigTargetMissing", "ConfigRendered", {"EnvSecretReady", "Probed"}},
      {Step::kEnvSecret, "SecretConflict", "EnvSecretReady", {"Probed"}},
      {Step::kProbe, "AuthFailed", "Probed", {}},
  };
  for (const auto& c : cases) {
    BackendStatusInput in;
    in.generation = 2;
    for (const auto& r : AllOk()) {
      if (r.step == c.failing) {
        in.steps.push_back({r.step, false, c.reason, "because"});
        break;
      }
      in.steps.push_back(r);
    }
    json prev = {{"envSecretName", "old-env"}, {"serverMaxPayload", 1048576}};
    json s = ComputeBackendStatus(prev, in, "T1");
    auto cs = ConditionsFromJson(s["conditions"]);
    const Condition* ready = FindCondition(cs, "Ready");
    ASSERT_NE(ready, nullptr);
    EXPECT_EQ(ready->status, "False");
    EXPECT_EQ(ready->reason, c.reason);
    EXPECT_EQ(ready->message, "because");
    if (!c.failed_condition.empty()) {
      EXPECT_EQ(FindCondition(cs, c.failed_condition)->status, "False") << c.reason;
    }
    for (const auto& p : c.pending) {
      EXPECT_EQ(FindCondition(cs, p)->status, "Unknown") << c.reason << " " << p;
      EXPECT_EQ(FindCondition(cs, p)->reason, "Pending");
    }
    EXPECT_EQ(s["envSecretName"], "old-env") << "a failed reconcile keeps what exists";
    EXPECT_EQ(s["serverMaxPayload"], 1048576);
  }
}

TEST(BackendStatus, NonNatsKindsHaveNoProbeAndDropStaleConditions) {
  BackendStatusInput nats;
  nats.steps = AllOk();
  json prev = ComputeBackendStatus(nullptr, nats, "T1");
  BackendStatusInput pg;
  pg.kind = BackendKind::kPostgres;
  pg.steps = {{Step::kValidate, true, "", ""}, {Step::kEnvSecret, true, "", ""}};
  pg.env_secret_name = "x-pubsub-env";
  json s = ComputeBackendStatus(prev, pg, "T2");
  auto cs = ConditionsFromJson(s["conditions"]);
  EXPECT_EQ(cs.size(), 2u);
  EXPECT_EQ(FindCondition(cs, "Ready")->reason, "EnvSecretWritten");
  EXPECT_EQ(FindCondition(cs, "Probed"), nullptr);
  EXPECT_EQ(FindCondition(cs, "Ready")->last_transition_time, "T1") << "still True";
  EXPECT_FALSE(s.contains("subject"));
}

TEST(BackendStatus, RotationIsShown) {
  BackendStatusInput in;
  in.steps = AllOk();
  in.rotation = {{"phase", "Retiring"}, {"retiresAt", "2026-11-30T10:10:00Z"}};
  json s = ComputeBackendStatus(nullptr, in, "T1");
  EXPECT_EQ(s["rotation"]["phase"], "Retiring");
}

ServerStatusInput Rendered(int installations, std::string hash) {
  ServerStatusInput in;
  in.generation = 3;
  in.installations = installations;
  in.config_hash = std::move(hash);
  return in;
}

TEST(ServerStatus, ReadyAndFailure) {
  json s = ComputeServerStatus(nullptr, Rendered(2, "sha256:x"), "T1");
  EXPECT_EQ(s["installations"], 2);
  EXPECT_EQ(s["configHash"], "sha256:x");
  EXPECT_EQ(s["conditions"][0]["reason"], "ConfigRendered");
  EXPECT_EQ(s["conditions"][0]["message"], "2 installation(s) rendered");
  EXPECT_EQ(s["conditions"].size(), 1u) << "no ConfigFits without a render's size";
  ServerStatusInput fail = Rendered(2, "");
  fail.generation = 4;
  fail.failure_reason = "ConfigTargetMissing";
  fail.failure_message = "no Secret";
  json f = ComputeServerStatus(s, fail, "T2");
  EXPECT_EQ(f["configHash"], "sha256:x");
  EXPECT_EQ(f["conditions"][0]["status"], "False");
  EXPECT_EQ(f["conditions"][0]["lastTransitionTime"], "T2");
}

// The file no longer fits: Ready stays True (what is rendered works) and
// says how many are left out; ConfigFits=False says how many fit and how
// many are left out; one Warning event when it turns False, a Normal one
// when it fits again, none for a first True or a repeat.
TEST(ServerStatus, ConfigFitsSaysHowManyFitAndHowManyAreLeftOut) {
  ServerStatusInput fits = Rendered(3, "sha256:a");
  fits.config_bytes = 900;
  fits.max_bytes = 1048576;
  fits.reserve_bytes = 65536;
  fits.left_out = 1;  // a RenderRejected one
  json a = ComputeServerStatus(nullptr, fits, "T1");
  auto conds = ConditionsFromJson(a["conditions"]);
  ASSERT_EQ(conds.size(), 2u);
  EXPECT_EQ(conds[0].type, "Ready");
  EXPECT_EQ(conds[0].message,
            "3 installation(s) rendered; 1 left out (each says why in its status)");
  EXPECT_EQ(conds[1].type, "ConfigFits");
  EXPECT_EQ(conds[1].status, "True");
  EXPECT_EQ(conds[1].reason, reasons::kFits);
  EXPECT_EQ(conds[1].message, "the rendered file takes 900 of 1048576 bytes (its Secret's limit)");
  EXPECT_FALSE(ConfigFitsEvent(nullptr, a).has_value()) << "a first True is no news";

  ServerStatusInput full = fits;
  full.installations = 4712;
  full.config_bytes = 983000;
  full.left_out = 289;
  full.left_out_full = 288;
  full.users_left_out_full = 2;
  json b = ComputeServerStatus(a, full, "T2");
  conds = ConditionsFromJson(b["conditions"]);
  EXPECT_EQ(conds[0].status, "True");
  EXPECT_EQ(conds[0].message,
            "4712 installation(s) rendered; 289 left out (each says why in its status, and see "
            "ConfigFits)");
  EXPECT_EQ(conds[1].status, "False");
  EXPECT_EQ(conds[1].reason, reasons::kConfigFull);
  EXPECT_EQ(conds[1].message,
            "the rendered file no longer fits its config Secret (at most 1048576 bytes; 65536 of "
            "them kept for rotations): 4712 installation(s) fit in 983000 bytes, 288 newer one(s) "
            "are left out and 2 rotation user(s) wait; bind some PubSubBackends to another "
            "NatsServer");
  EXPECT_EQ(conds[1].last_transition_time, "T2");
  auto ev = ConfigFitsEvent(a, b);
  ASSERT_TRUE(ev.has_value());
  EXPECT_TRUE(ev->warning);
  EXPECT_EQ(ev->reason, reasons::kConfigFull);
  EXPECT_FALSE(ReadyTransitionEvent(a, b).has_value()) << "Ready did not change";
  EXPECT_FALSE(ConfigFitsEvent(b, ComputeServerStatus(b, full, "T3")).has_value());

  json c = ComputeServerStatus(b, fits, "T4");
  ev = ConfigFitsEvent(b, c);
  ASSERT_TRUE(ev.has_value());
  EXPECT_FALSE(ev->warning);
  EXPECT_EQ(ev->reason, reasons::kFits);

  // A failed render keeps the last ConfigFits.
  ServerStatusInput fail = Rendered(4712, "");
  fail.failure_reason = "InvalidSpec";
  fail.failure_message = "spec.maxPayload: ...";
  json d = ComputeServerStatus(b, fail, "T5");
  conds = ConditionsFromJson(d["conditions"]);
  ASSERT_EQ(conds.size(), 2u);
  EXPECT_EQ(conds[1].reason, reasons::kConfigFull);
}

TEST(ParseBackendKind, Table) {
  EXPECT_EQ(ParseBackendKind("nats").value(), BackendKind::kNats);
  EXPECT_EQ(ParseBackendKind("rabbitmq").value(), BackendKind::kRabbitMq);
  EXPECT_EQ(ParseBackendKind("postgres").value(), BackendKind::kPostgres);
  EXPECT_FALSE(ParseBackendKind("kafka").ok());
}

TEST(ProbeFailureReason, Table) {
  struct Case {
    StatusCode code;
    bool reload_expected;
    std::string_view reason;
  } cases[] = {
      {StatusCode::kUnavailable, false, reasons::kServerUnreachable},
      {StatusCode::kUnavailable, true, reasons::kServerUnreachable},
      {StatusCode::kUnauthenticated, false, reasons::kAuthFailed},
      {StatusCode::kUnauthenticated, true, reasons::kConfigNotReloaded},
      {StatusCode::kPermissionDenied, false, reasons::kPermissionDenied},
      {StatusCode::kPermissionDenied, true, reasons::kConfigNotReloaded},
      {StatusCode::kFailedPrecondition, false, reasons::kMaxPayloadTooSmall},
      {StatusCode::kFailedPrecondition, true, reasons::kMaxPayloadTooSmall},
      {StatusCode::kTimeout, false, reasons::kServerUnreachable},
      {StatusCode::kTimeout, true, reasons::kConfigNotReloaded},
      // Refused at a connection limit: past the credentials, so nothing a
      // reload would change.
      {StatusCode::kResourceExhausted, false, reasons::kConnectionLimitReached},
      {StatusCode::kResourceExhausted, true, reasons::kConnectionLimitReached},
      {StatusCode::kInternal, false, reasons::kServerUnreachable},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(ProbeFailureReason(c.code, c.reload_expected), c.reason)
        << StatusCodeName(c.code) << " reload_expected=" << c.reload_expected;
  }
}

json ReadyStatusJson(const std::string& status, const std::string& reason,
                     const std::string& message = "m") {
  return {{"conditions", json::array({ToJson(Condition{"Ready", status, reason, message, 1,
                                                       "2026-11-30T10:00:00Z"})})}};
}

TEST(ReadyTransitionEvent, OnlyWhenStatusOrReasonChanges) {
  struct Case {
    const char* name;
    json previous;
    json next;
    bool event;
    bool warning;
  } cases[] = {
      {"first status, Ready", nullptr, ReadyStatusJson("True", "Probed"), true, false},
      {"first status, not Ready", json::object(), ReadyStatusJson("False", "AuthFailed"), true,
       true},
      {"unchanged (a restart recomputes it)", ReadyStatusJson("True", "Probed"),
       ReadyStatusJson("True", "Probed"), false, false},
      {"same failure again (a retry)", ReadyStatusJson("False", "ServerUnreachable", "a"),
       ReadyStatusJson("False", "ServerUnreachable", "b"), false, false},
      {"reason changes", ReadyStatusJson("False", "ServerUnreachable"),
       ReadyStatusJson("False", "AuthFailed"), true, true},
      {"recovers", ReadyStatusJson("False", "ConfigNotReloaded"), ReadyStatusJson("True", "Probed"),
       true, false},
      {"waiting for a reload is no fault: Normal", ReadyStatusJson("True", "Probed"),
       ReadyStatusJson("False", "ConfigNotReloaded"), true, false},
      {"waiting for the authorizers is no fault either: Normal", ReadyStatusJson("True", "Probed"),
       ReadyStatusJson("False", "AuthorizerPending"), true, false},
      {"the wait ends in a refusal", ReadyStatusJson("False", "AuthorizerPending"),
       ReadyStatusJson("False", "AuthFailed"), true, true},
      {"left out of the render", ReadyStatusJson("False", "ConfigNotReloaded"),
       ReadyStatusJson("False", "RenderRejected"), true, true},
      {"left out: the file is full", json::object(), ReadyStatusJson("False", "ConfigFull"), true,
       true},
      {"at the connection limit is a fault, not a wait: Warning", ReadyStatusJson("True", "Probed"),
       ReadyStatusJson("False", "ConnectionLimitReached"), true, true},
      {"rotation staged while Ready", ReadyStatusJson("True", "Probed"),
       ReadyStatusJson("True", "RotationStaged"), true, false},
      {"no Ready in next", ReadyStatusJson("True", "Probed"), json::object(), false, false},
  };
  for (const auto& c : cases) {
    auto ev = ReadyTransitionEvent(c.previous, c.next);
    EXPECT_EQ(ev.has_value(), c.event) << c.name;
    if (ev) {
      EXPECT_EQ(ev->warning, c.warning) << c.name;
    }
  }
}

// Every reason the reconciler can report, from the step that failed, to
// Ready and the sub-condition (conditions as data).
TEST(ComputeBackendStatus, EveryReasonFromItsStep) {
  struct Case {
    Step step;
    std::string_view reason;
    std::string_view sub_condition;  // "" when the step has none
  } cases[] = {
      {Step::kValidate, reasons::kInvalidSpec, ""},
      {Step::kResolveServer, reasons::kServerNotFound, ""},
      {Step::kResolveServer, reasons::kNamespaceNotAllowed, ""},
      {Step::kCredentials, reasons::kSecretConflict, condition_types::kCredentialsReady},
      {Step::kCredentials, reasons::kCredentialsNotFound, condition_types::kCredentialsReady},
      {Step::kEnvSecret, reasons::kSecretConflict, condition_types::kEnvSecretReady},
      {Step::kRenderConfig, reasons::kConfigNotReloaded, condition_types::kConfigRendered},
      {Step::kRenderConfig, reasons::kConfigTargetMissing, condition_types::kConfigRendered},
      {Step::kRenderConfig, reasons::kRenderRejected, condition_types::kConfigRendered},
      {Step::kRenderConfig, reasons::kConfigFull, condition_types::kConfigRendered},
      {Step::kProbe, reasons::kConfigNotReloaded, condition_types::kProbed},
      {Step::kProbe, reasons::kMaxPayloadTooSmall, condition_types::kProbed},
      {Step::kProbe, reasons::kAuthFailed, condition_types::kProbed},
      {Step::kProbe, reasons::kPermissionDenied, condition_types::kProbed},
      {Step::kProbe, reasons::kServerUnreachable, condition_types::kProbed},
      {Step::kProbe, reasons::kConnectionLimitReached, condition_types::kProbed},
  };
  for (const auto& c : cases) {
    BackendStatusInput in;
    in.generation = 4;
    in.steps = {{c.step, false, std::string(c.reason), "why"}};
    json st = ComputeBackendStatus(nullptr, in, "T1");
    auto conds = ConditionsFromJson(st["conditions"]);
    const Condition* ready = FindCondition(conds, condition_types::kReady);
    ASSERT_NE(ready, nullptr);
    EXPECT_EQ(ready->status, "False") << c.reason;
    EXPECT_EQ(ready->reason, c.reason);
    EXPECT_EQ(ready->observed_generation, 4);
    if (!c.sub_condition.empty()) {
      const Condition* sub = FindCondition(conds, c.sub_condition);
      ASSERT_NE(sub, nullptr) << c.sub_condition;
      EXPECT_EQ(sub->status, "False");
      EXPECT_EQ(sub->reason, c.reason);
    }
  }
}

TEST(ComputeBackendStatus, RotationStagedIsReadyAndARecomputeChangesNothing) {
  BackendStatusInput in;
  in.generation = 2;
  in.steps = {{Step::kCredentials, true, "", ""},
              {Step::kRenderConfig, true, "", ""},
              {Step::kEnvSecret, true, "", ""},
              {Step::kProbe, true, "", ""}};
  in.ready_reason = std::string(reasons::kRotationStaged);
  in.ready_message = "env credentials work";
  in.env_secret_name = "h-pubsub-env";
  in.env_secret_hash = "sha256:1";
  in.username = "u";
  in.subject = "p.*";
  json st = ComputeBackendStatus(nullptr, in, "T1");
  auto conds = ConditionsFromJson(st["conditions"]);
  EXPECT_EQ(FindCondition(conds, "Ready")->status, "True");
  EXPECT_EQ(FindCondition(conds, "Ready")->reason, reasons::kRotationStaged);
  // A restarted operator computing the same inputs later: byte-identical
  // status (no write), and no event.
  json again = ComputeBackendStatus(st, in, "T9");
  EXPECT_EQ(again, st);
  EXPECT_FALSE(ReadyTransitionEvent(st, again).has_value());
}
}  // namespace
}  // namespace switchboard::operator_logic
