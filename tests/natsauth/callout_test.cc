// natsauth against a real nats-server in auth callout mode: the server
// (nats-server-callout, built from its Go module into the tools cache by
// scripts/build-tools.sh) hands every CONNECT of an unknown user to a
// responder in this test, which decodes the request with natsauth, checks
// the password against a small table and answers with natsauth's response
// JWT. A missing tool is a failure, not a skip.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nats/nats.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "switchboard/api/constants.h"
#include "switchboard/natsauth/jwt.h"
#include "switchboard/natsauth/nkey.h"
#include "switchboard/testing/callout_config.h"
#include "switchboard/testing/callout_responder.h"
#include "switchboard/testing/nats_client.h"
#include "switchboard/testing/nats_server.h"
#include "switchboard/testing/tool_path.h"
#include "switchboard/testing/wait.h"

namespace switchboard::natsauth {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

constexpr auto kDeadline = std::chrono::seconds(10);
// The static config of callout mode as the operator ships it: the
// callout's own user in SWITCHBOARD_AUTH, the installations in HATCHET, SYS
// kept local by allowed_accounts.
const std::string kAuthUser(api::kAuthorizerUsername);
constexpr char kAuthPassword[] = "auth-password";
const std::string kSysUser(api::kCalloutSystemUsername);
constexpr char kSysPassword[] = "sys-password";
constexpr char kDeletedError[] = "installation inst-gone is being deleted";

// One installation in the responder's table.
struct Entry {
  std::string password;
  std::string prefix;
  std::string deny;  // when set, refused with this error whatever the password
};

using switchboard::testing::CalloutResponder;

// The test's authorizer: decodes each request with natsauth, checks the
// password against `table` and answers with natsauth's response JWT. The
// outcome's reason is the decision ("allowed", "wrong password", ...).
CalloutResponder::Answer TableAnswer(const KeyPair& issuer, std::map<std::string, Entry> table) {
  return [&issuer, table = std::move(table)](std::string_view token) -> CalloutResponder::Outcome {
    auto now = static_cast<int64_t>(std::time(nullptr));
    auto request = DecodeAuthorizationRequest(std::string(token), now, issuer.public_key());
    if (!request.ok()) {
      return {.reason = "undecodable request", .error = request.status().ToString()};
    }
    AuthorizationResponseClaims response;
    response.claims = {
        .audience = request->server_id.id, .issued_at = now, .subject = request->user_nkey};
    const ConnectOptions& connect = request->connect_opts;
    auto it = table.find(connect.user);
    std::string reason;
    if (it == table.end()) {
      reason = "unknown user";
      response.error = "unknown user";
    } else if (!it->second.deny.empty()) {
      reason = "denied";
      response.error = it->second.deny;
    } else if (connect.pass != it->second.password) {
      reason = "wrong password";
      response.error = "wrong password";
    } else {
      UserClaims user;
      user.claims = {.audience = "HATCHET",
                     .issued_at = now,
                     .name = connect.user,
                     .subject = request->user_nkey};
      user.pub.allow = user.sub.allow = {it->second.prefix + ".*"};
      auto jwt = EncodeUserClaims(user, issuer);
      if (!jwt.ok()) return {.reason = "signing failed", .error = jwt.status().ToString()};
      response.jwt = std::move(*jwt);
      reason = "allowed";
    }
    auto answer = EncodeAuthorizationResponse(response, issuer);
    if (!answer.ok()) return {.reason = "signing failed", .error = answer.status().ToString()};
    return {.reply = std::move(*answer), .reason = reason};
  };
}

using Client = switchboard::testing::NatsTestClient;

class CalloutTest : public switchboard::testing::NatsLibraryTest {
 protected:
  void SetUp() override {
    std::string tool = switchboard::testing::ToolPath("nats-server-callout");
    ASSERT_EQ(access(tool.c_str(), X_OK), 0)
        << tool << " is missing: build it with `bash scripts/build-tools.sh nats-server-callout` "
        << "(make test does, through make tools)";
    auto issuer = KeyPair::Generate(KeyType::kAccount);
    ASSERT_TRUE(issuer.ok()) << issuer.status().ToString();
    issuer_ = std::make_unique<KeyPair>(std::move(issuer).value());
    auto config = switchboard::testing::CalloutConfig({.issuer = issuer_->public_key(),
                                                       .authorizer_password = kAuthPassword,
                                                       .system_password = kSysPassword});
    ASSERT_TRUE(config.ok()) << config.status().ToString();
    server_ = std::make_unique<switchboard::testing::NatsServer>(*config, 0, tool);
    ASSERT_TRUE(server_->ok()) << server_->Log();
    responder_ = std::make_unique<CalloutResponder>(
        std::make_unique<Client>(server_->url(), kAuthUser, kAuthPassword),
        TableAnswer(*issuer_,
                    {
                        {"inst-a", {.password = "pw-a", .prefix = "hatchet.a"}},
                        {"inst-b", {.password = "pw-b", .prefix = "hatchet.b"}},
                        {"inst-gone",
                         {.password = "pw-gone", .prefix = "hatchet.gone", .deny = kDeletedError}},
                    }));
    ASSERT_TRUE(responder_->ok()) << responder_->error() << "\n" << server_->Log();
  }

  void TearDown() override {
    if (responder_) {
      EXPECT_THAT(responder_->Errors(), ::testing::IsEmpty());
    }
    responder_.reset();
    server_.reset();
  }

  std::unique_ptr<KeyPair> issuer_;
  std::unique_ptr<switchboard::testing::NatsServer> server_;
  std::unique_ptr<CalloutResponder> responder_;
};

TEST_F(CalloutTest, RightPasswordRoundTripsOnItsPrefix) {
  Client client(server_->url(), "inst-a", "pw-a");
  ASSERT_TRUE(client.connected()) << client.error() << "\n" << server_->Log();
  EXPECT_EQ(responder_->Count("allowed"), 1);
  ASSERT_TRUE(client.Subscribe("hatchet.a.*"));
  ASSERT_TRUE(client.Publish("hatchet.a.x", "hello"));
  EXPECT_EQ(client.Next(), "hello");
  EXPECT_THAT(client.errors(), ::testing::IsEmpty());

  // The user JWT placed it: account HATCHET (its aud), named by its name.
  Client sys(server_->url(), kSysUser, kSysPassword);
  ASSERT_TRUE(sys.connected()) << sys.error();
  json connz =
      json::parse(sys.Request("$SYS.REQ.SERVER.PING.CONNZ", R"({"auth":true})"), nullptr, false);
  ASSERT_TRUE(connz.is_object()) << connz;
  bool found = false;
  for (const auto& c : connz["data"].value("connections", json::array())) {
    if (c.value("authorized_user", "") == "inst-a") {
      found = true;
      EXPECT_EQ(c.value("account", ""), "HATCHET") << c;
    }
  }
  EXPECT_TRUE(found) << connz;
}

TEST_F(CalloutTest, AnotherPrefixIsAPermissionViolation) {
  Client a(server_->url(), "inst-a", "pw-a");
  Client b(server_->url(), "inst-b", "pw-b");
  ASSERT_TRUE(a.connected()) << a.error() << "\n" << server_->Log();
  ASSERT_TRUE(b.connected()) << b.error() << "\n" << server_->Log();
  ASSERT_TRUE(b.Subscribe("hatchet.b.*"));

  // Publishing on b's prefix is refused, and b never sees it.
  ASSERT_TRUE(a.Publish("hatchet.b.x", "intruder"));
  EXPECT_TRUE(a.WaitForError("Permissions Violation for Publish to \"hatchet.b.x\""))
      << ::testing::PrintToString(a.errors());
  // A later message of b's own arrives first: the intruder's never came.
  ASSERT_TRUE(b.Publish("hatchet.b.y", "own"));
  EXPECT_EQ(b.Next(), "own");

  // Subscribing to b's prefix is refused too.
  ASSERT_TRUE(a.Subscribe("hatchet.b.*"));
  EXPECT_TRUE(a.WaitForError("Permissions Violation for Subscription to \"hatchet.b.*\""))
      << ::testing::PrintToString(a.errors());
}

TEST_F(CalloutTest, WrongPasswordIsRefused) {
  Client client(server_->url(), "inst-a", "not-pw-a");
  EXPECT_FALSE(client.connected());
  EXPECT_EQ(client.status(), NATS_CONNECTION_AUTH_FAILED) << natsStatus_GetText(client.status());
  EXPECT_THAT(client.error(), HasSubstr("Authorization Violation"));
  EXPECT_EQ(responder_->Count("wrong password"), 1);
  EXPECT_EQ(responder_->Count("allowed"), 0);
  EXPECT_THAT(server_->LogWith("wrong password", kDeadline), HasSubstr("wrong password"));
}

TEST_F(CalloutTest, DenialErrorResponseIsRefused) {
  Client client(server_->url(), "inst-gone", "pw-gone");
  EXPECT_FALSE(client.connected());
  EXPECT_EQ(client.status(), NATS_CONNECTION_AUTH_FAILED) << natsStatus_GetText(client.status());
  EXPECT_THAT(client.error(), HasSubstr("Authorization Violation"));
  EXPECT_EQ(responder_->Count("denied"), 1);
  // The server logs the response's error; the client only sees the violation.
  EXPECT_THAT(server_->LogWith(kDeletedError, kDeadline), HasSubstr(kDeletedError));
  EXPECT_THAT(client.error(), ::testing::Not(HasSubstr(kDeletedError)));
}

TEST_F(CalloutTest, LocalUsersBypassTheCallout) {
  // SYS is outside allowed_accounts: its user authenticates from the config.
  Client sys(server_->url(), kSysUser, kSysPassword);
  ASSERT_TRUE(sys.connected()) << sys.error() << "\n" << server_->Log();
  EXPECT_EQ(responder_->Count("allowed") + responder_->Count("unknown user") +
                responder_->Count("wrong password"),
            0);
}

}  // namespace
}  // namespace switchboard::natsauth
