// `switchboard pubsub ...` run as a subprocess against real nats-servers.
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <sstream>

#include "nats_test_util.h"
#include "switchboard/pubsub/codec.h"
#include "switchboard/testing/nats_server.h"
#include "switchboard/testing/process.h"
#include "switchboard/testing/temp_dir.h"
#include "switchboard/testing/wait.h"

namespace switchboard::pubsub {
namespace {

using testing::NatsServer;
using testutil::WireTap;

std::string Binary() {
  const char* dir = std::getenv("SWITCHBOARD_BINARY_DIR");
  return std::string(dir ? dir : SWITCHBOARD_TEST_BINARY_DIR) + "/bin/switchboard";
}

std::map<std::string, std::string> Env(const NatsServer& s, const std::string& prefix = "") {
  std::map<std::string, std::string> env = {{"SERVER_MSGQUEUE_PUBSUB_NATS_URL", s.url()}};
  if (!prefix.empty()) env["SERVER_MSGQUEUE_PUBSUB_NATS_SUBJECT_PREFIX"] = prefix;
  return env;
}

TEST(PubsubCliTest, HelpEverywhere) {
  for (std::vector<std::string> args : {std::vector<std::string>{"pubsub", "--help"},
                                        {"pubsub", "pub", "--help"},
                                        {"pubsub", "sub", "--help"},
                                        {"pubsub", "probe", "--help"},
                                        {"pubsub", "bench", "--help"}}) {
    args.insert(args.begin(), Binary());
    auto r = testing::Run(args);
    EXPECT_EQ(r.exit_code, 0) << args[2] << r.err;
    EXPECT_NE(r.out.find("Usage: switchboard pubsub"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("SERVER_MSGQUEUE_PUBSUB_NATS_URL"), std::string::npos) << r.out;
  }
}

TEST(PubsubCliTest, UsageErrorsExitTwoAndNameTheProblem) {
  auto r = testing::Run({Binary(), "pubsub", "pub", "--bogus"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--bogus"), std::string::npos) << r.err;
  r = testing::Run({Binary(), "pubsub", "pub", "--tenant", "x", "--scheduler", "y", "p"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("exactly one of --tenant"), std::string::npos) << r.err;
  r = testing::Run({Binary(), "pubsub", "sub", "--topic", "a.b"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("topic name"), std::string::npos) << r.err;
  r = testing::Run({Binary(), "pubsub", "frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
}

TEST(PubsubCliTest, ProbeUsesTheEngineEnvAndReportsReasons) {
  NatsServer good;
  ASSERT_TRUE(good.ok()) << good.Log();
  auto r = testing::Run({Binary(), "pubsub", "probe"}, Env(good, "hatchet.team-a"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("healthy"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("16777216"), std::string::npos) << r.out;

  NatsServer small("", 0);
  ASSERT_TRUE(small.ok()) << small.Log();
  r = testing::Run({Binary(), "pubsub", "probe", "--url", small.url()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("FailedPrecondition"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1048576"), std::string::npos) << r.err;

  NatsServer auth(R"(authorization { users = [ { user: "u", password: "right-pw" } ] })");
  ASSERT_TRUE(auth.ok()) << auth.Log();
  auto env = Env(auth);
  env["SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME"] = "u";
  env["SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD"] = "wrong-pw";
  r = testing::Run({Binary(), "pubsub", "probe"}, env);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Unauthenticated"), std::string::npos) << r.err;
  EXPECT_EQ((r.out + r.err).find("wrong-pw"), std::string::npos) << "password leaked";
  env["SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD"] = "right-pw";
  r = testing::Run({Binary(), "pubsub", "probe", "--json"}, env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"healthy\":true"), std::string::npos) << r.out;
}

TEST(PubsubCliTest, PubAndSubRoundTripWithCompression) {
  NatsServer server;
  ASSERT_TRUE(server.ok()) << server.Log();
  testing::TempDir dir;
  std::string big = "{\"data\":\"" + std::string(6000, 'z') + "\"}";  // > 5 KiB
  std::string big_path = dir.WriteFile("big.json", big);
  const std::string tenant = "8f3b1c2d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
  WireTap tap(server.url(), "hatchet.team-a." + tenant + "_v1");
  ASSERT_TRUE(tap.ok());
  testing::Process sub(testing::Process::Options{
      .argv = {Binary(), "pubsub", "sub", "--tenant", tenant, "--count", "2", "--timeout", "30s"},
      .env = Env(server, "hatchet.team-a"),
      .log_path = dir.path() + "/sub.log",
  });
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        return sub.Log().find("subscribed to hatchet.team-a." + tenant + "_v1") !=
               std::string::npos;
      },
      std::chrono::seconds(15)))
      << sub.Log();
  auto r = testing::Run(
      {Binary(), "pubsub", "pub", "--tenant", tenant, "--id", "task-completed", "{\"a\":1}"},
      Env(server, "hatchet.team-a"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto wire = DecodeMessage(tap.Next());
  ASSERT_TRUE(wire.ok()) << wire.status().ToString();
  EXPECT_FALSE(wire->compressed) << "uncompressed unless --compress, like the engine";
  // Both payloads shrink under gzip, and together they pass the threshold.
  std::string small = "{\"from\":\"stdin\",\"pad\":\"" + std::string(40, ' ') + "\"}";
  r = testing::Run({Binary(), "pubsub", "pub", "--compress", "--tenant", tenant, "--payload-file",
                    "-", "--payload-file", big_path},
                   Env(server, "hatchet.team-a"), small);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  wire = DecodeMessage(tap.Next());
  ASSERT_TRUE(wire.ok()) << wire.status().ToString();
  EXPECT_TRUE(wire->compressed) << "--compress gzips";
  EXPECT_LT(wire->PayloadBytes(), big.size() / 10);
  auto code = sub.Wait(std::chrono::seconds(30));
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 0) << sub.Log();

  std::vector<Message> got;
  std::istringstream lines(sub.Log());
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("{\"id\"")) continue;
    auto m = DecodeMessage(line);
    ASSERT_TRUE(m.ok()) << line;
    EXPECT_EQ(EncodeMessage(*m), line) << "printed in Go's wire format";
    got.push_back(*m);
  }
  ASSERT_EQ(got.size(), 2u) << sub.Log();
  EXPECT_EQ(got[0].id, "task-completed");
  EXPECT_EQ(got[0].tenant_id, tenant);
  EXPECT_EQ(*got[0].payloads, std::vector<std::string>{"{\"a\":1}"});
  EXPECT_FALSE(got[1].compressed) << "printed decompressed, as a Go handler sees it";
  EXPECT_EQ(*got[1].payloads, (std::vector<std::string>{small, big}));
}

// The engine stamps published_at on every message it publishes (its
// transit-time histogram reads it); so does `pub`, at publish.
TEST(PubsubCliTest, PubStampsPublishedAtLikeTheEngine) {
  NatsServer server;
  ASSERT_TRUE(server.ok()) << server.Log();
  WireTap tap(server.url(), "hatchet.pubsub.p1_scheduler_v1");
  ASSERT_TRUE(tap.ok());
  auto before = std::chrono::system_clock::now();
  auto r = testing::Run({Binary(), "pubsub", "pub", "--scheduler", "p1", "{}"}, Env(server));
  auto after = std::chrono::system_clock::now();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string body = tap.Next();
  std::smatch match;
  ASSERT_TRUE(std::regex_search(
      body, match,
      std::regex(R"re("published_at":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z")re")))
      << body;
  auto wire = DecodeMessage(body);
  ASSERT_TRUE(wire.ok()) << wire.status().ToString();
  auto at = wire->published_at.ToSystemClock();
  EXPECT_LE(before, at);
  EXPECT_LE(at, after);
  EXPECT_EQ(EncodeMessage(*wire), body) << "Go's RFC 3339 with trimmed nanoseconds";
}

// Two installations on one server, permissions as the operator renders them.
const char* kTwoUsersConfig = R"(
authorization {
  users = [
    { user: "team-a", password: "pw-a",
      permissions: { publish: ["hatchet.team-a.*"], subscribe: ["hatchet.team-a.*"] } }
    { user: "team-b", password: "pw-b",
      permissions: { publish: ["hatchet.team-b.*"], subscribe: ["hatchet.team-b.*"] } }
  ]
}
)";

std::map<std::string, std::string> AsTeamA(const NatsServer& s) {
  auto env = Env(s, "hatchet.team-a");
  env["SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME"] = "team-a";
  env["SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD"] = "pw-a";
  return env;
}

// A user checking isolation with the CLI must be told the server's verdict.
TEST(PubsubCliTest, PubOutsideTheUsersPermissionsFailsWithTheServersMessage) {
  NatsServer server(kTwoUsersConfig);
  ASSERT_TRUE(server.ok()) << server.Log();
  const std::string tenant = "8f3b1c2d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
  auto r = testing::Run({Binary(), "pubsub", "pub", "--tenant", tenant, "{}"}, AsTeamA(server));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("published 1 payload(s) to hatchet.team-a."), std::string::npos) << r.err;

  r = testing::Run(
      {Binary(), "pubsub", "pub", "--prefix", "hatchet.team-b", "--tenant", tenant, "{}"},
      AsTeamA(server));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.find("published"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("PermissionDenied"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Permissions Violation for Publish to"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("hatchet.team-b." + tenant + "_v1"), std::string::npos) << r.err;
  EXPECT_EQ((r.out + r.err).find("pw-a"), std::string::npos) << "password leaked";
}

TEST(PubsubCliTest, SubOutsideTheUsersPermissionsFailsWithTheServersMessage) {
  NatsServer server(kTwoUsersConfig);
  ASSERT_TRUE(server.ok()) << server.Log();
  auto r = testing::Run({Binary(), "pubsub", "sub", "--prefix", "hatchet.team-b", "--scheduler",
                         "p1", "--timeout", "30s"},
                        AsTeamA(server));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.find("subscribed to"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("PermissionDenied"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Permissions Violation for Subscription to"), std::string::npos) << r.err;

  r = testing::Run({Binary(), "pubsub", "sub", "--scheduler", "p1", "--timeout", "200ms"},
                   AsTeamA(server));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("subscribed to hatchet.team-a.p1_scheduler_v1"), std::string::npos) << r.err;
}

TEST(PubsubCliTest, SubTimesOutWhenCountIsNotReached) {
  NatsServer server;
  ASSERT_TRUE(server.ok()) << server.Log();
  auto r = testing::Run(
      {Binary(), "pubsub", "sub", "--scheduler", "p1", "--count", "1", "--timeout", "300ms"},
      Env(server));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("received 0 of 1"), std::string::npos) << r.err;
}

TEST(PubsubCliTest, BenchReportsThroughput) {
  NatsServer server;
  ASSERT_TRUE(server.ok()) << server.Log();
  auto r = testing::Run({Binary(), "pubsub", "bench", "--count", "2000"}, Env(server));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"received\":2000"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace switchboard::pubsub
