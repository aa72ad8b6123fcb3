// Probe against real nats-servers: healthy, unreachable, bad credentials,
// small max_payload, permission violation on the prefix.
#include "switchboard/pubsub/probe.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "silent_nats.h"
#include "switchboard/testing/nats_server.h"
#include "switchboard/testing/net.h"

namespace switchboard::pubsub {
namespace {

using testing::NatsServer;

// Users with permissions as the operator renders them: `<prefix>.*`.
const char* kAuthConfig = R"(
authorization {
  users = [
    { user: "team-a", password: "s3cret-a",
      permissions: { publish: ["team.a.*"], subscribe: ["team.a.*", "_INBOX.>"] } }
    { user: "narrow", password: "s3cret-n",
      permissions: { publish: ["team.a.only"], subscribe: ["team.a.only"] } }
  ]
}
)";

TEST(ProbeTest, HealthyServerRoundTrips) {
  NatsServer server;
  ASSERT_TRUE(server.ok()) << server.Log();
  auto r = Probe({.urls = server.url(), .subject_prefix = "hatchet.pubsub"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->server_max_payload, 16 * 1024 * 1024);
  EXPECT_NE(r->connected_url.find(std::to_string(server.port())), std::string::npos);
  EXPECT_GT(r->round_trip.count(), 0);
}

TEST(ProbeTest, UnreachableServerIsUnavailable) {
  int port = testing::FreePort();
  auto r = Probe(
      {.urls = "nats://127.0.0.1:" + std::to_string(port), .timeout = std::chrono::seconds(2)});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
}

TEST(ProbeTest, SmallMaxPayloadIsFailedPreconditionNamingBothNumbers) {
  NatsServer server("", 0);  // NATS default: 1 MiB
  ASSERT_TRUE(server.ok()) << server.Log();
  auto r = Probe({.urls = server.url()});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("1048576"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("16777216"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("max_payload=1048576"), std::string::npos);
  EXPECT_NE(r.status().message().find("max_payload: 16777216"), std::string::npos)
      << "names the fix";
}

TEST(ProbeTest, WrongPasswordIsUnauthenticatedAndNotLeaked) {
  NatsServer server(kAuthConfig);
  ASSERT_TRUE(server.ok()) << server.Log();
  auto r = Probe({.urls = server.url(),
                  .username = "team-a",
                  .password = "wrong-pass",
                  .subject_prefix = "team.a"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnauthenticated) << r.status().ToString();
  EXPECT_EQ(r.status().message().find("wrong-pass"), std::string::npos);
}

TEST(ProbeTest, RightCredentialsOnOwnPrefixSucceed) {
  NatsServer server(kAuthConfig);
  ASSERT_TRUE(server.ok()) << server.Log();
  auto r = Probe({.urls = server.url(),
                  .username = "team-a",
                  .password = "s3cret-a",
                  .subject_prefix = "team.a"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
}

TEST(ProbeTest, PrefixOutsidePermissionsIsPermissionDenied) {
  NatsServer server(kAuthConfig);
  ASSERT_TRUE(server.ok()) << server.Log();
  auto r = Probe({.urls = server.url(),
                  .username = "team-a",
                  .password = "s3cret-a",
                  .subject_prefix = "team.b"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied) << r.status().ToString();
}

// The one outcome a real nats-server cannot be made to produce on demand:
// connected and flushed, but the message never comes back. A fake server
// (silent_nats.h) swallows publishes.
TEST(ProbeTest, LostRoundTripIsTimeout) {
  testutil::SilentNats server;
  ASSERT_TRUE(server.ok());
  auto r = Probe({.urls = server.url(), .timeout = std::chrono::milliseconds(500)});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kTimeout) << r.status().ToString();
  EXPECT_NE(r.status().message().find("hatchet.pubsub.switchboard_probe_v1"), std::string::npos);
}

TEST(ProbeTest, ConcurrentProbesOnOnePrefixAllSucceed) {
  NatsServer server;
  ASSERT_TRUE(server.ok()) << server.Log();
  std::vector<std::thread> threads;
  std::atomic<int> healthy{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      if (Probe({.urls = server.url(), .subject_prefix = "shared.prefix"}).ok()) ++healthy;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(healthy, 4);
}

TEST(ProbeTest, BadOptionsNameTheField) {
  auto r = Probe({.urls = ""});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("urls"), std::string::npos);
  r = Probe({.urls = "nats://user:pw@127.0.0.1:4222"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message().find("pw"), std::string::npos) << r.status().message();
  r = Probe({.urls = "nats://127.0.0.1:4222", .subject_prefix = "a.*"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("subject prefix"), std::string::npos);
}

}  // namespace
}  // namespace switchboard::pubsub
