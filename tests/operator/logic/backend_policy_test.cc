#include "switchboard/operator_logic/backend_policy.h"

#include <gtest/gtest.h>

#include "switchboard/operator_logic/conditions.h"

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

ProbeFailureFacts Refused(StatusCode code, ConfigLoad load, int waiting_s, bool in_config = true,
                          bool has_status = true) {
  ProbeFailureFacts f;
  f.code = code;
  f.probe_message = "nats: Authorization Violation; check the username and password";
  f.user = "team-a-hatchet";
  f.server = "nats/shared";
  f.user_in_config = in_config;
  f.load = load;
  f.user_waiting = seconds(waiting_s);
  f.load_window = seconds(120);
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

}  // namespace
}  // namespace switchboard::operator_logic
