#include "switchboard/operator_logic/backend_policy.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "switchboard/operator_logic/conditions.h"
#include "switchboard/operator_logic/time_util.h"

namespace switchboard::operator_logic {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(DecideInFile, Table) {
  auto facts = [](bool probe_in, bool env_in, bool rendered, bool has_status,
                  std::optional<LeftOut> left_out = std::nullopt) {
    InFileFacts f;
    f.server = "nats/shared";
    f.config_secret = "shared-switchboard";
    f.probe_user_in = probe_in;
    f.env_user_in = env_in;
    f.env_user = "u";
    f.server_rendered = rendered;
    f.has_status = has_status;
    f.left_out = std::move(left_out);
    return f;
  };
  const LeftOut full{std::string(reasons::kConfigFull), "left out: the file is full"};
  struct Case {
    const char* name;
    InFileFacts facts;
    InFile want;
    std::string_view reason;
  } cases[] = {
      {"in the file: on to the probe", facts(true, true, true, true), InFile::kProceed, ""},
      {"a Staged rotation: the env user is in", facts(false, true, true, true), InFile::kProceed,
       ""},
      {"a new backend waits quietly for the write", facts(false, false, true, false), InFile::kWait,
       ""},
      {"after a restart, before the server's first render: no status flips",
       facts(false, false, false, true), InFile::kWait, ""},
      {"an existing backend says it waits for the write", facts(false, false, true, true),
       InFile::kReport, reasons::kConfigNotReloaded},
      {"left out, new backend: it gets a status at once", facts(false, false, true, false, full),
       InFile::kLeftOut, reasons::kConfigFull},
      {"left out although the old file still has it", facts(true, true, true, true, full),
       InFile::kLeftOut, reasons::kConfigFull},
  };
  for (const auto& c : cases) {
    auto step = DecideInFile(c.facts);
    EXPECT_EQ(step.step, c.want) << c.name;
    EXPECT_EQ(step.reason, c.reason) << c.name;
  }
  auto staged = DecideInFile(facts(false, true, true, true, full));
  EXPECT_EQ(staged.step, InFile::kLeftOut);
  EXPECT_EQ(staged.message,
            "left out: the file is full; engines keep the env Secret's user u, which is still "
            "rendered");
  EXPECT_EQ(DecideInFile(facts(false, false, true, true)).message,
            "the user is not yet in NatsServer nats/shared's config Secret shared-switchboard");
}

// Refused through the rendered file.
ProbeFailureFacts Refused(StatusCode code, ConfigLoad load, int waiting_s, bool in_config = true,
                          bool has_status = true) {
  ProbeFailureFacts f;
  f.code = code;
  f.probe_message = "nats: Authorization Violation; check the username and password";
  f.user = "team-a-hatchet";
  f.server = "nats/shared";
  ThroughFile file;
  file.user_in_config = in_config;
  file.load = load;
  file.load_window = seconds(120);
  f.path = file;
  f.user_waiting = seconds(waiting_s);
  f.has_status = has_status;
  f.reload_retry = milliseconds(500);
  f.failure_retry = seconds(10);
  return f;
}

TEST(DecideProbeFailure, Table) {
  const auto kAuth = StatusCode::kUnauthenticated;
  struct Case {
    const char* name;
    ProbeFailureFacts facts;
    std::string_view reason;
    bool report;
    milliseconds retry;
  } cases[] = {
      {"no report, just rendered: not loaded yet", Refused(kAuth, ConfigLoad::kUnknown, 0),
       reasons::kConfigNotReloaded, true, milliseconds(500)},
      {"no report, 70 s: the kubelet may still be syncing",
       Refused(kAuth, ConfigLoad::kUnknown, 70), reasons::kConfigNotReloaded, true, seconds(5)},
      {"no report, 16 s: retries grow with the wait", Refused(kAuth, ConfigLoad::kUnknown, 16),
       reasons::kConfigNotReloaded, true, seconds(2)},
      {"no report, past the window: the credentials are refused",
       Refused(kAuth, ConfigLoad::kUnknown, 120), reasons::kAuthFailed, true, seconds(10)},
      {"the reloader says it loaded the user: refused for real",
       Refused(kAuth, ConfigLoad::kLoaded, 1), reasons::kAuthFailed, true, seconds(10)},
      {"the reloader says an earlier config: not loaded yet",
       Refused(kAuth, ConfigLoad::kPending, 1), reasons::kConfigNotReloaded, true,
       milliseconds(500)},
      {"not in the config Secret at all (a Staged user)",
       Refused(kAuth, ConfigLoad::kUnknown, 500, false), reasons::kConfigNotReloaded, true,
       seconds(5)},
      {"a new backend waits quietly", Refused(kAuth, ConfigLoad::kUnknown, 3, true, false),
       reasons::kConfigNotReloaded, false, milliseconds(500)},
      {"permission refused while not loaded",
       Refused(StatusCode::kPermissionDenied, ConfigLoad::kUnknown, 3), reasons::kConfigNotReloaded,
       true, milliseconds(500)},
      {"permission refused once loaded",
       Refused(StatusCode::kPermissionDenied, ConfigLoad::kLoaded, 3), reasons::kPermissionDenied,
       true, seconds(10)},
      {"a timeout while not loaded", Refused(StatusCode::kTimeout, ConfigLoad::kUnknown, 3),
       reasons::kConfigNotReloaded, true, milliseconds(500)},
      {"a timeout past the window", Refused(StatusCode::kTimeout, ConfigLoad::kUnknown, 200),
       reasons::kServerUnreachable, true, seconds(10)},
      {"unreachable is unreachable, loaded or not",
       Refused(StatusCode::kUnavailable, ConfigLoad::kUnknown, 0), reasons::kServerUnreachable,
       true, seconds(10)},
      {"max_payload too small, whatever the wait",
       Refused(StatusCode::kFailedPrecondition, ConfigLoad::kUnknown, 0),
       reasons::kMaxPayloadTooSmall, true, seconds(10)},
  };
  for (const auto& c : cases) {
    auto step = DecideProbeFailure(c.facts);
    EXPECT_EQ(step.reason, c.reason) << c.name;
    EXPECT_EQ(step.report, c.report) << c.name;
    EXPECT_EQ(step.retry, c.retry) << c.name;
    if (step.reason == reasons::kConfigNotReloaded) {
      // Honest waiting: it says the server has not loaded the user, and no
      // word tells the user to check the credentials.
      EXPECT_NE(step.message.find("team-a-hatchet"), std::string::npos) << c.name;
      EXPECT_EQ(step.message.find("check the username"), std::string::npos) << c.name;
      EXPECT_EQ(step.message.find("Authorization Violation"), std::string::npos) << c.name;
    }
  }
}

TEST(DecideProbeFailure, MessagesSayWhatIsAwaitedAndStayTheSameAcrossRetries) {
  auto early = DecideProbeFailure(Refused(StatusCode::kUnauthenticated, ConfigLoad::kUnknown, 2));
  auto later = DecideProbeFailure(Refused(StatusCode::kUnauthenticated, ConfigLoad::kUnknown, 60));
  EXPECT_EQ(early.message, later.message) << "a retry must not rewrite the status";
  EXPECT_EQ(early.message,
            "NatsServer nats/shared has not loaded user team-a-hatchet yet: a NATS pod sees its "
            "config Secret change only after the kubelet's volume sync (up to about a minute) and "
            "its config reloader; the probe is retried, and a refusal 2m0s after the user was "
            "rendered counts as AuthFailed");
  auto failed =
      DecideProbeFailure(Refused(StatusCode::kUnauthenticated, ConfigLoad::kUnknown, 130));
  EXPECT_EQ(failed.message,
            "nats: Authorization Violation; check the username and password (user team-a-hatchet "
            "has been in NatsServer nats/shared's config Secret for over 2m0s: check that its "
            "NATS pods include that file)");
}

// ---- DecideProbe ----

constexpr int64_t kGen = 3;
const Time kNow = ParseTime("2026-12-01T12:00:00Z").value();

nlohmann::json StoredReady(const std::string& reason, const std::string& probed_at,
                           int64_t gen = kGen, const std::string& user = "u",
                           const std::string& hash = "sha256:env") {
  return {{"observedGeneration", gen},
          {"envSecretHash", hash},
          {"username", user},
          {"lastProbeTime", probed_at},
          {"conditions", nlohmann::json::array(
                             {ToJson(Condition{"Ready", "True", reason, "m", gen, probed_at})})}};
}

// Probing user u through the rendered file (in it, nothing reported).
ProbeFacts Probing(nlohmann::json stored = nullptr) {
  ProbeFacts f;
  f.generation = kGen;
  f.env_secret_hash = "sha256:env";
  f.username = "u";
  f.stored_status = std::move(stored);
  f.now = kNow;
  f.interval = seconds(300);
  f.next_probe = seconds(300);
  f.failure = Refused(StatusCode::kOk, ConfigLoad::kUnknown, 0);
  f.failure.user = "u";
  return f;
}

// An outcome; through the file, `load` is the reloader's verdict it is
// judged with.
ProbeFacts With(ProbeFacts f, bool primary_ok, bool fallback_ok, int age_s,
                StatusCode code = StatusCode::kOk, ConfigLoad load = ConfigLoad::kUnknown,
                int waiting_s = 0) {
  ProbeFacts::Outcome o;
  o.primary_ok = primary_ok;
  o.fallback_ok = fallback_ok;
  o.age = seconds(age_s);
  o.code = code;
  o.message = "nats: Authorization Violation; check the username and password";
  o.user_waiting = seconds(waiting_s);
  f.outcome = o;
  if (auto* file = std::get_if<ThroughFile>(&f.failure.path)) file->load = load;
  return f;
}

ProbeFacts Staged(ProbeFacts f) {
  f.staged = true;
  f.fallback = true;
  f.failure.user = "u-r1";
  return f;
}

ProbeFacts Pending(ProbeFacts f, int patience_left_s) {
  auto& file = std::get<ThroughFile>(f.failure.path);
  file.load = ConfigLoad::kPending;
  file.load_patience_left = seconds(patience_left_s);
  return f;
}

TEST(DecideProbe, Table) {
  const auto kAuth = StatusCode::kUnauthenticated;
  const auto ready_2m_ago = StoredReady("Probed", "2026-12-01T11:58:00Z");
  const auto ready_6m_ago = StoredReady("Probed", "2026-12-01T11:54:00Z");
  const auto failing = nlohmann::json{
      {"conditions", nlohmann::json::array({ToJson(Condition{"Ready", "False", "AuthFailed", "m",
                                                             kGen, "2026-12-01T11:00:00Z"})})}};
  struct Case {
    const char* name;
    ProbeFacts facts;
    ProbeAction action;
    bool report;
    ProbeThen then;
    milliseconds after;
    std::string_view reason;
  } cases[] = {
      {"a new backend: probe", Probing(), ProbeAction::kSubmit, true, ProbeThen::kAwait,
       milliseconds(0), ""},
      {"after a restart a recent stored Ready is trusted until the interval is up",
       Probing(ready_2m_ago), ProbeAction::kTrustStored, true, ProbeThen::kRequeue, seconds(180),
       ""},
      {"a stored Ready older than the interval is probed again", Probing(ready_6m_ago),
       ProbeAction::kSubmit, true, ProbeThen::kAwait, milliseconds(0), ""},
      {"a stored Ready of another generation is not trusted",
       Probing(StoredReady("Probed", "2026-12-01T11:58:00Z", kGen - 1)), ProbeAction::kSubmit, true,
       ProbeThen::kAwait, milliseconds(0), ""},
      {"a stored Ready for another user is not trusted",
       Probing(StoredReady("Probed", "2026-12-01T11:58:00Z", kGen, "v")), ProbeAction::kSubmit,
       true, ProbeThen::kAwait, milliseconds(0), ""},
      {"a stored Ready for another env Secret is not trusted",
       Probing(StoredReady("Probed", "2026-12-01T11:58:00Z", kGen, "u", "sha256:old")),
       ProbeAction::kSubmit, true, ProbeThen::kAwait, milliseconds(0), ""},
      {"a stored RotationStaged is not a proof of the current user",
       Probing(StoredReady("RotationStaged", "2026-12-01T11:58:00Z")), ProbeAction::kSubmit, true,
       ProbeThen::kAwait, milliseconds(0), ""},
      {"Staged never trusts a stored Ready", Staged(Probing(ready_2m_ago)), ProbeAction::kSubmit,
       true, ProbeThen::kAwait, milliseconds(0), ""},
      {"the reloader says not loaded yet: a new backend waits quietly", Pending(Probing(), 20),
       ProbeAction::kWaitForLoad, false, ProbeThen::kRequeue, seconds(20),
       reasons::kConfigNotReloaded},
      {"the reloader says not loaded yet: an existing backend says so",
       Pending(Probing(failing), 20), ProbeAction::kWaitForLoad, true, ProbeThen::kRequeue,
       seconds(20), reasons::kConfigNotReloaded},
      {"waiting for the reloader is rechecked at least every 100 ms", Pending(Probing(failing), 0),
       ProbeAction::kWaitForLoad, true, ProbeThen::kRequeue, milliseconds(100),
       reasons::kConfigNotReloaded},
      {"Staged does not wait for the reloader (the fallback covers it)",
       Pending(Staged(Probing(failing)), 20), ProbeAction::kSubmit, true, ProbeThen::kAwait,
       milliseconds(0), ""},
      {"passed: probe again once next_probe has passed", With(Probing(), true, false, 10),
       ProbeAction::kPassed, true, ProbeThen::kRequeue, seconds(290) + milliseconds(1), ""},
      {"passed long ago: probe again now", With(Probing(), true, false, 300), ProbeAction::kPassed,
       true, ProbeThen::kProbeAgain, milliseconds(0), ""},
      {"Staged and the new user passed: confirm", With(Staged(Probing()), true, false, 0),
       ProbeAction::kConfirm, true, ProbeThen::kRequeue, seconds(300), ""},
      {"Staged and only the env Secret's user passed: RotationStaged, retried soon",
       With(Staged(Probing()), false, true, 0, kAuth), ProbeAction::kRotationStaged, true,
       ProbeThen::kRequeue, milliseconds(501), reasons::kRotationStaged},
      {"refused while not loaded: a new backend waits quietly",
       With(Probing(), false, false, 0, kAuth), ProbeAction::kFailed, false, ProbeThen::kRequeue,
       milliseconds(501), reasons::kConfigNotReloaded},
      {"refused while not loaded: an existing backend says so",
       With(Probing(failing), false, false, 0, kAuth), ProbeAction::kFailed, true,
       ProbeThen::kRequeue, milliseconds(501), reasons::kConfigNotReloaded},
      {"refused once loaded: AuthFailed, retried after 10 s",
       With(Probing(failing), false, false, 0, kAuth, ConfigLoad::kLoaded), ProbeAction::kFailed,
       true, ProbeThen::kRequeue, seconds(10) + milliseconds(1), reasons::kAuthFailed},
      {"a failure's retry is due: probe again",
       With(Probing(failing), false, false, 11, StatusCode::kUnavailable), ProbeAction::kFailed,
       true, ProbeThen::kProbeAgain, milliseconds(0), reasons::kServerUnreachable},
  };
  for (const auto& c : cases) {
    auto step = DecideProbe(c.facts);
    EXPECT_EQ(step.action, c.action) << c.name;
    EXPECT_EQ(step.report, c.report) << c.name;
    EXPECT_EQ(step.then, c.then) << c.name;
    if (step.then == ProbeThen::kRequeue) {
      EXPECT_EQ(step.after, c.after) << c.name;
    }
    EXPECT_EQ(step.reason, c.reason) << c.name;
  }
}

// ---- DecideFinalize ----

TEST(DecideFinalize, Table) {
  auto facts = [](bool server, bool config, bool rendered, std::optional<int> deleting_s) {
    FinalizeFacts f;
    f.has_finalizer = true;
    f.server = "nats/shared";
    f.server_exists = server;
    RemovalFromFile file;
    file.config_exists = config;
    file.users_rendered = rendered;
    if (deleting_s) file.deleting_for = seconds(*deleting_s);
    file.cleanup_timeout = seconds(60);
    f.removal = file;
    return f;
  };
  FinalizeFacts none;
  FinalizeFacts unbound = facts(true, true, true, 0);
  unbound.server = "";
  struct Case {
    const char* name;
    FinalizeFacts facts;
    Finalize step;
    bool warning;
    std::string_view reason;
  } cases[] = {
      {"no finalizer of ours", none, Finalize::kNothing, false, ""},
      {"the user left the file: clean up", facts(true, true, false, 5), Finalize::kCleanUp, false,
       reasons::kUserRemoved},
      {"still rendered: wait", facts(true, true, true, 5), Finalize::kWait, false, ""},
      {"still rendered just before the timeout", facts(true, true, true, 59), Finalize::kWait,
       false, ""},
      {"still rendered at the timeout: go anyway", facts(true, true, true, 60), Finalize::kCleanUp,
       true, reasons::kCleanupTimedOut},
      {"a deletionTimestamp that does not parse never wedges it",
       facts(true, true, true, std::nullopt), Finalize::kCleanUp, true, reasons::kCleanupTimedOut},
      {"the server is gone", facts(false, false, true, 0), Finalize::kCleanUp, true,
       reasons::kServerGone},
      {"its config Secret is gone", facts(true, false, true, 0), Finalize::kCleanUp, true,
       reasons::kConfigTargetMissing},
      {"rabbitmq, postgres, or no serverRef: clean up, no event", unbound, Finalize::kCleanUp,
       false, ""},
  };
  for (const auto& c : cases) {
    auto step = DecideFinalize(c.facts);
    EXPECT_EQ(step.step, c.step) << c.name;
    EXPECT_EQ(step.warning, c.warning) << c.name;
    EXPECT_EQ(step.reason, c.reason) << c.name;
    if (!step.reason.empty()) {
      EXPECT_NE(step.message.find("NatsServer nats/shared"), std::string::npos) << c.name;
    }
  }
  EXPECT_EQ(DecideFinalize(facts(true, true, true, 5)).recheck, milliseconds(500));
}

// ---- AuthCallout mode ----

// Refused through the authorizers (no file facts to set: a user reaches the
// server one way).
ProbeFailureFacts CalloutRefused(StatusCode code, int waiting_ms, bool has_status = true) {
  ProbeFailureFacts f = Refused(code, ConfigLoad::kUnknown, 0, true, has_status);
  ThroughAuthorizers authorizers;
  authorizers.authorizer_sync = seconds(5);
  f.path = authorizers;
  f.user_waiting = milliseconds(waiting_ms);
  return f;
}

TEST(DecideProbeFailure, AuthCalloutTable) {
  const auto kAuth = StatusCode::kUnauthenticated;
  struct Case {
    const char* name;
    ProbeFailureFacts facts;
    std::string_view reason;
    bool report;
    milliseconds retry;
    std::string message;  // substring
  } cases[] = {
      {"refused just after the Secret was written: the authorizer may not have it",
       CalloutRefused(kAuth, 100), reasons::kAuthorizerPending, true, milliseconds(500),
       "has not seen user team-a-hatchet's credentials yet"},
      {"refused 4.8 s after: still pending, retries grow", CalloutRefused(kAuth, 4800),
       reasons::kAuthorizerPending, true, milliseconds(600), "within 5s"},
      {"a new backend waits quietly", CalloutRefused(kAuth, 100, false),
       reasons::kAuthorizerPending, false, milliseconds(500), ""},
      {"just past the sync window: still pending (a lagging watch), retried soon",
       CalloutRefused(kAuth, 5000), reasons::kAuthorizerPending, true, milliseconds(625),
       "may lag under load"},
      {"past the window a new backend is reported, without blaming the user",
       CalloutRefused(kAuth, 5000, false), reasons::kAuthorizerPending, true, milliseconds(625),
       "a refusal after 1m0s counts as AuthFailed"},
      {"the retry grows with the wait but stays bounded", CalloutRefused(kAuth, 30000),
       reasons::kAuthorizerPending, true, seconds(2), "retried every 2s or sooner"},
      {"the last retry before the patience runs out", CalloutRefused(kAuth, 59999),
       reasons::kAuthorizerPending, true, seconds(2), "written less than 1m0s ago"},
      {"refused once the patience is over: AuthFailed, with a hint at the authorizer",
       CalloutRefused(kAuth, 60000), reasons::kAuthFailed, true, seconds(10),
       "AuthorizerAvailable"},
      {"permission refused within the window", CalloutRefused(StatusCode::kPermissionDenied, 10),
       reasons::kAuthorizerPending, true, milliseconds(500), ""},
      {"permission refused past the window: pending, and says what it will count as",
       CalloutRefused(StatusCode::kPermissionDenied, 9000), reasons::kAuthorizerPending, true,
       milliseconds(1125), "counts as PermissionDenied"},
      {"permission refused after the patience",
       CalloutRefused(StatusCode::kPermissionDenied, 61000), reasons::kPermissionDenied, true,
       seconds(10), ""},
      {"a timeout within the window", CalloutRefused(StatusCode::kTimeout, 10),
       reasons::kAuthorizerPending, true, milliseconds(500), ""},
      {"a timeout after the patience", CalloutRefused(StatusCode::kTimeout, 60000),
       reasons::kServerUnreachable, true, seconds(10), ""},
      {"unreachable is unreachable at once", CalloutRefused(StatusCode::kUnavailable, 0),
       reasons::kServerUnreachable, true, seconds(10), ""},
      {"max_payload too small at once", CalloutRefused(StatusCode::kFailedPrecondition, 0),
       reasons::kMaxPayloadTooSmall, true, seconds(10), ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto step = DecideProbeFailure(c.facts);
    EXPECT_EQ(step.reason, c.reason);
    EXPECT_EQ(step.report, c.report);
    EXPECT_EQ(step.retry, c.retry);
    EXPECT_NE(step.message.find(c.message), std::string::npos) << step.message;
    // No file, no reload: never a word about either.
    EXPECT_EQ(step.message.find("config Secret"), std::string::npos) << step.message;
    EXPECT_EQ(step.message.find("reload"), std::string::npos) << step.message;
    // Never a password; never the user's fault while the authorizer may
    // still be catching up.
    EXPECT_EQ(step.message.find("s3cret"), std::string::npos) << step.message;
    if (step.reason == reasons::kAuthorizerPending) {
      EXPECT_EQ(step.message.find("check"), std::string::npos) << step.message;
    }
  }
  // The message is stable across retries within each phase (no status
  // write per retry).
  EXPECT_EQ(DecideProbeFailure(CalloutRefused(kAuth, 6000)).message,
            DecideProbeFailure(CalloutRefused(kAuth, 50000)).message);
  EXPECT_EQ(DecideProbeFailure(CalloutRefused(kAuth, 100)).message,
            DecideProbeFailure(CalloutRefused(kAuth, 4000)).message);
}

// The retry schedule a refused new backend goes through while its
// credentials age: short and bounded until the patience is over, then the
// long failure retry. Summed, it covers the whole patience with a probe at
// most callout_retry apart.
TEST(DecideProbeFailure, AuthCalloutRetrySchedule) {
  milliseconds waiting{0};
  int probes = 0;
  milliseconds longest{0};
  std::string_view reason;
  while (true) {
    auto step = DecideProbeFailure(CalloutRefused(StatusCode::kUnauthenticated,
                                                  static_cast<int>(waiting.count()), probes > 0));
    probes++;
    reason = step.reason;
    if (reason != reasons::kAuthorizerPending) {
      EXPECT_EQ(step.retry, seconds(10));
      break;
    }
    EXPECT_GE(step.retry, milliseconds(500));
    EXPECT_LE(step.retry, seconds(2));
    longest = std::max(longest, step.retry);
    waiting += step.retry;
    ASSERT_LT(probes, 1000);
  }
  EXPECT_EQ(reason, reasons::kAuthFailed);
  EXPECT_GE(waiting, seconds(60));
  EXPECT_LT(waiting, seconds(62));
  EXPECT_EQ(longest, seconds(2));
  EXPECT_LT(probes, 60);  // bounded: about one a second on average
}

// The pool retries exactly what DecideProbeFailure calls AuthorizerPending,
// after that step's retry; everything else is the final outcome.
TEST(DecideProbeRetry, Table) {
  const auto kAuth = StatusCode::kUnauthenticated;
  ProbeFailureFacts file_mode = Refused(kAuth, ConfigLoad::kPending, 0, false, true);
  struct Case {
    const char* name;
    ProbeFailureFacts facts;
    std::optional<milliseconds> retry;
  } cases[] = {
      {"a refusal just after the write: again soon", CalloutRefused(kAuth, 100, false),
       milliseconds(500)},
      {"the retry grows with the credentials' age", CalloutRefused(kAuth, 4800, false),
       milliseconds(600)},
      {"a backend with a status, inside the window: in the pool too (no flap)",
       CalloutRefused(kAuth, 4000, true), milliseconds(500)},
      {"the last retry inside the window", CalloutRefused(kAuth, 4999, false), milliseconds(624)},
      {"past the sync window: the reconcile reports AuthorizerPending",
       CalloutRefused(kAuth, 5000, false), std::nullopt},
      {"past the window, with a status", CalloutRefused(kAuth, 30000, true), std::nullopt},
      {"past the patience: the reconcile (AuthFailed)", CalloutRefused(kAuth, 60000), std::nullopt},
      {"a permission refusal while young", CalloutRefused(StatusCode::kPermissionDenied, 10),
       milliseconds(500)},
      {"a timeout while young", CalloutRefused(StatusCode::kTimeout, 10), milliseconds(500)},
      {"unreachable: final at once", CalloutRefused(StatusCode::kUnavailable, 0), std::nullopt},
      {"max_payload too small: final at once", CalloutRefused(StatusCode::kFailedPrecondition, 0),
       std::nullopt},
      {"file mode: the reconcile decides (a reload to wait for)", file_mode, std::nullopt},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(DecideProbeRetry(c.facts), c.retry);
    // One rule: a retry in the pool is what the reconcile would have called
    // AuthorizerPending, after the same interval.
    auto step = DecideProbeFailure(c.facts);
    const auto* authorizers = std::get_if<ThroughAuthorizers>(&c.facts.path);
    EXPECT_EQ(c.retry.has_value(), authorizers != nullptr &&
                                       step.reason == reasons::kAuthorizerPending &&
                                       c.facts.user_waiting < authorizers->authorizer_sync);
    if (c.retry) {
      EXPECT_EQ(*c.retry, step.retry);
    }
  }
  // Followed from the first refusal, the pool's schedule ends with the
  // window: what the reconcile then reads is a reported AuthorizerPending.
  milliseconds waiting{0};
  int probes = 0;
  while (auto after =
             DecideProbeRetry(CalloutRefused(kAuth, static_cast<int>(waiting.count()), false))) {
    waiting += *after;
    ASSERT_LT(++probes, 1000);
  }
  EXPECT_GE(waiting, seconds(5));
  EXPECT_LT(waiting, seconds(7));
  auto reported =
      DecideProbeFailure(CalloutRefused(kAuth, static_cast<int>(waiting.count()), false));
  EXPECT_EQ(reported.reason, reasons::kAuthorizerPending);
  EXPECT_TRUE(reported.report);
}

// ---- a probe refused at a connection limit (either mode) ----

// pubsub::Probe's messages (nats_status.cc) for the two -ERR texts.
constexpr const char* kAccountLimit =
    "connect to nats://nats.nats:4222: Error ((conn.c:1905): maximum account active connections "
    "exceeded); the server accepted the credentials but refused the connection at the account's "
    "connection limit (the account's max_connections)";
constexpr const char* kServerLimit =
    "connect to nats://nats.nats:4222: Error (Maximum Connections Exceeded); the server refused "
    "the connection at its own connection limit (the server's max_connections)";

// The probe pool reads which limit from pubsub::ConnectionLimitOf.
ProbeFailureFacts AtLimit(ProbeFailureFacts f, const char* text,
                          std::optional<int64_t> max_connections = 3) {
  f.code = StatusCode::kResourceExhausted;
  f.probe_message = text;
  f.server_connection_limit = std::string_view(text) == kServerLimit;
  f.max_connections = max_connections;
  return f;
}

TEST(DecideProbeFailure, ConnectionLimitTable) {
  const auto kLimit = StatusCode::kResourceExhausted;
  struct Case {
    const char* name;
    ProbeFailureFacts facts;
    std::vector<std::string> says;
  } cases[] = {
      {"file: the account's limit while the user may not be loaded yet: no ConfigNotReloaded",
       AtLimit(Refused(kLimit, ConfigLoad::kUnknown, 0), kAccountLimit),
       {"accepted user team-a-hatchet's credentials", "(maxConnections: 3, across the cluster)",
        "Engines already connected keep working", "no new engine replica can connect",
        "raise spec.nats.limits.maxConnections",
        "NatsServer nats/shared's spec.installationLimits.maxConnections",
        "above the number of engine replicas plus one for the operator's probe"}},
      {"file: the account's limit, the reloader says an earlier config",
       AtLimit(Refused(kLimit, ConfigLoad::kPending, 0, false), kAccountLimit),
       {"installation's account is at its connection limit"}},
      {"file: the account's limit once loaded",
       AtLimit(Refused(kLimit, ConfigLoad::kLoaded, 300), kAccountLimit),
       {"(maxConnections: 3, across the cluster)"}},
      {"file: a new backend is told at once (a fault, not a wait)",
       AtLimit(Refused(kLimit, ConfigLoad::kUnknown, 0, true, false), kAccountLimit),
       {"no new engine replica can connect"}},
      {"file: no effective limit known: the field, without a value",
       AtLimit(Refused(kLimit, ConfigLoad::kLoaded, 0), kAccountLimit, std::nullopt),
       {"(maxConnections, across the cluster)"}},
      {"file: the server's own limit",
       AtLimit(Refused(kLimit, ConfigLoad::kUnknown, 0), kServerLimit),
       {"the NATS server's own connection limit", "raise the NATS server's max_connections",
        "already connected keep working"}},
      {"authorizers: the account's limit within the sync window: no AuthorizerPending",
       AtLimit(CalloutRefused(kLimit, 100), kAccountLimit),
       {"accepted user team-a-hatchet's credentials", "(maxConnections: 3, across the cluster)",
        "raise spec.nats.limits.maxConnections"}},
      {"authorizers: a new backend within the sync window is told at once",
       AtLimit(CalloutRefused(kLimit, 100, false), kAccountLimit),
       {"installation's account is at its connection limit"}},
      {"authorizers: the account's limit past the patience",
       AtLimit(CalloutRefused(kLimit, 61000), kAccountLimit),
       {"(maxConnections: 3"}},
      {"authorizers: the server's own limit",
       AtLimit(CalloutRefused(kLimit, 100), kServerLimit),
       {"the NATS server's own connection limit"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto step = DecideProbeFailure(c.facts);
    EXPECT_EQ(step.reason, reasons::kConnectionLimitReached);
    EXPECT_TRUE(step.report);
    EXPECT_EQ(step.retry, seconds(10));
    for (const auto& want : c.says) {
      EXPECT_NE(step.message.find(want), std::string::npos) << want << "\n" << step.message;
    }
    const bool server_limit = std::string_view(c.facts.probe_message) == kServerLimit;
    // The server's own limit is not the installation's to raise, and is
    // hit before the credentials are looked at.
    EXPECT_EQ(step.message.find("maxConnections") == std::string::npos, server_limit)
        << step.message;
    EXPECT_EQ(step.message.find("credentials") == std::string::npos, server_limit) << step.message;
    // Not a refusal of the user: no word of loading, authorizers, or
    // checking the password; never a secret.
    EXPECT_EQ(step.message.find("reload"), std::string::npos) << step.message;
    EXPECT_EQ(step.message.find("authorizer"), std::string::npos) << step.message;
    EXPECT_EQ(step.message.find("check the username"), std::string::npos) << step.message;
    EXPECT_EQ(step.message.find("s3cret"), std::string::npos) << step.message;
    // The pool takes it as final: no retry of its own.
    EXPECT_EQ(DecideProbeRetry(c.facts), std::nullopt);
  }
  // Stable across retries: the status is written once.
  EXPECT_EQ(DecideProbeFailure(AtLimit(CalloutRefused(kLimit, 100), kAccountLimit)).message,
            DecideProbeFailure(AtLimit(CalloutRefused(kLimit, 90000), kAccountLimit)).message);
  EXPECT_EQ(
      DecideProbeFailure(AtLimit(Refused(kLimit, ConfigLoad::kUnknown, 0), kAccountLimit)).message,
      "NatsServer nats/shared accepted user team-a-hatchet's credentials but refused the "
      "probe's connection: the installation's account is at its connection limit "
      "(maxConnections: 3, across the cluster). Engines already connected keep working, but "
      "no new engine replica can connect; raise spec.nats.limits.maxConnections (or "
      "NatsServer nats/shared's spec.installationLimits.maxConnections) above the number of "
      "engine replicas plus one for the operator's probe");
}

TEST(DecideProbe, ConnectionLimitIsReportedAndRetriedAfterTheFailureRetry) {
  const auto kLimit = StatusCode::kResourceExhausted;
  for (bool callout : {false, true}) {
    SCOPED_TRACE(callout ? "authorizers" : "file");
    // A new backend (no status), its user just written: the cases where a
    // refusal would wait quietly.
    ProbeFacts f = With(Probing(), false, false, 0, kLimit, ConfigLoad::kPending, 0);
    if (callout) f.failure.path = ThroughAuthorizers{};
    f.failure.max_connections = 3;
    f.outcome->message = kAccountLimit;
    auto step = DecideProbe(f);
    EXPECT_EQ(step.action, ProbeAction::kFailed);
    EXPECT_TRUE(step.report);
    EXPECT_EQ(step.reason, reasons::kConnectionLimitReached);
    EXPECT_EQ(step.then, ProbeThen::kRequeue);
    EXPECT_EQ(step.after, seconds(10) + milliseconds(1));
    // A Staged rotation: the limit is the account's, whichever user.
    ProbeFacts staged = With(Staged(Probing()), false, false, 0, kLimit);
    if (callout) staged.failure.path = ThroughAuthorizers{};
    staged.outcome->message = kAccountLimit;
    EXPECT_EQ(DecideProbe(staged).reason, reasons::kConnectionLimitReached);
  }
}

TEST(DecideProbe, AuthCalloutTable) {
  const auto kAuth = StatusCode::kUnauthenticated;
  const auto failing = nlohmann::json{
      {"conditions", nlohmann::json::array({ToJson(Condition{"Ready", "False", "AuthFailed", "m",
                                                             kGen, "2026-12-01T11:00:00Z"})})}};
  auto callout = [](ProbeFacts f) {
    ThroughAuthorizers authorizers;
    authorizers.authorizer_sync = seconds(5);
    f.failure.path = authorizers;
    return f;
  };
  auto refused = [&](ProbeFacts f, int waiting_ms) {
    f = With(callout(std::move(f)), false, false, 0, kAuth);
    f.outcome->user_waiting = milliseconds(waiting_ms);
    return f;
  };
  struct Case {
    const char* name;
    ProbeFacts facts;
    ProbeAction action;
    bool report;
    ProbeThen then;
    milliseconds after;
    std::string_view reason;
  } cases[] = {
      {"no reload to wait for: probe", callout(Probing(failing)), ProbeAction::kSubmit, true,
       ProbeThen::kAwait, milliseconds(0), ""},
      {"a recent stored Ready is trusted as in file mode",
       callout(Probing(StoredReady("Probed", "2026-12-01T11:58:00Z"))), ProbeAction::kTrustStored,
       true, ProbeThen::kRequeue, seconds(180), ""},
      {"refused within the sync window: AuthorizerPending, retried soon",
       refused(Probing(failing), 0), ProbeAction::kFailed, true, ProbeThen::kRequeue,
       milliseconds(501), reasons::kAuthorizerPending},
      {"a new backend refused within the window waits quietly", refused(Probing(), 0),
       ProbeAction::kFailed, false, ProbeThen::kRequeue, milliseconds(501),
       reasons::kAuthorizerPending},
      {"refused past the window: still AuthorizerPending, retried soon",
       refused(Probing(failing), 6000), ProbeAction::kFailed, true, ProbeThen::kRequeue,
       milliseconds(751), reasons::kAuthorizerPending},
      {"a new backend refused past the window is reported", refused(Probing(), 6000),
       ProbeAction::kFailed, true, ProbeThen::kRequeue, milliseconds(751),
       reasons::kAuthorizerPending},
      {"refused after the patience: AuthFailed", refused(Probing(failing), 61000),
       ProbeAction::kFailed, true, ProbeThen::kRequeue, seconds(10) + milliseconds(1),
       reasons::kAuthFailed},
      {"Staged and the new password passed: confirm",
       callout(With(Staged(Probing()), true, false, 0)), ProbeAction::kConfirm, true,
       ProbeThen::kRequeue, seconds(300), ""},
      {"Staged and only the old password passed: RotationStaged",
       callout(With(Staged(Probing()), false, true, 0, kAuth)), ProbeAction::kRotationStaged, true,
       ProbeThen::kRequeue, milliseconds(501), reasons::kRotationStaged},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto step = DecideProbe(c.facts);
    EXPECT_EQ(step.action, c.action);
    EXPECT_EQ(step.report, c.report);
    EXPECT_EQ(step.then, c.then);
    if (step.then == ProbeThen::kRequeue) {
      EXPECT_EQ(step.after, c.after);
    }
    EXPECT_EQ(step.reason, c.reason);
    EXPECT_NE(step.reason, reasons::kConfigNotReloaded);
  }
  auto staged = DecideProbe(callout(With(Staged(Probing()), false, true, 0, kAuth)));
  EXPECT_NE(staged.message.find("authorizer accepts user u-r1's new password"), std::string::npos)
      << staged.message;
}

TEST(DecideFinalize, AuthCalloutTable) {
  // No config Secret, rendered users or deletion time to set: the
  // authorizers wait for nothing.
  auto facts = [](bool server) {
    FinalizeFacts f;
    f.has_finalizer = true;
    f.server = "nats/shared";
    f.server_exists = server;
    f.removal = RemovalByAuthorizers{};
    return f;
  };
  FinalizeFacts none;
  none.removal = RemovalByAuthorizers{};
  FinalizeFacts unbound = facts(true);
  unbound.server = "";
  struct Case {
    const char* name;
    FinalizeFacts facts;
    Finalize step;
    bool warning;
    std::string_view reason;
  } cases[] = {
      {"no finalizer of ours", none, Finalize::kNothing, false, ""},
      {"nothing to wait for: clean up at once", facts(true), Finalize::kCleanUp, false,
       reasons::kUserRemoved},
      {"the server is gone", facts(false), Finalize::kCleanUp, true, reasons::kServerGone},
      {"not a bound nats backend: no event", unbound, Finalize::kCleanUp, false, ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto step = DecideFinalize(c.facts);
    EXPECT_EQ(step.step, c.step);
    EXPECT_EQ(step.warning, c.warning);
    EXPECT_EQ(step.reason, c.reason);
    if (step.reason == reasons::kUserRemoved) {
      EXPECT_NE(step.message.find("authorizer refuses it"), std::string::npos) << step.message;
    }
  }
}

}  // namespace
}  // namespace switchboard::operator_logic
