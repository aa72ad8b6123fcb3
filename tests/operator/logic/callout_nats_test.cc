// The static config of AuthCallout mode (RenderCalloutConfig) against the
// real server it is for (nats-server-callout, 2.15, from the tools cache):
// it passes `-t` when included from a main config, the system user logs in
// to SYS and the authorizer to SWITCHBOARD_AUTH without the callout, and
// every other user is handed to the callout (refused when nobody answers).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <ctime>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "switchboard/natsauth/jwt.h"
#include "switchboard/natsauth/nkey.h"
#include "switchboard/operator_logic/callout.h"
#include "switchboard/testing/directory.h"
#include "switchboard/testing/nats_client.h"
#include "switchboard/testing/nats_server.h"
#include "switchboard/testing/process.h"
#include "switchboard/testing/temp_dir.h"
#include "switchboard/testing/tool_path.h"

namespace switchboard::operator_logic {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using testing::NatsServer;
using testing::TempDir;

using Client = testing::NatsTestClient;

// Without reconnects: a refusal is final.
std::unique_ptr<Client> Connect(const std::string& url, const std::string& user,
                                const std::string& password) {
  return std::make_unique<Client>(url, user, password);
}

// Raw nats.c handles: the library stays open for the suite.
class CalloutConfigTest : public testing::NatsLibraryTest {
 protected:
  void SetUp() override {
    tool_ = switchboard::testing::ToolPath("nats-server-callout");
    ASSERT_EQ(access(tool_.c_str(), X_OK), 0)
        << tool_ << " is missing: build it with `bash scripts/build-tools.sh nats-server-callout` "
        << "(make test does, through make tools)";
    auto plan = PlanCalloutKeys(std::nullopt);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    keys_ = plan->keys;
    input_.server_ns = "nats";
    input_.server_name = "shared";
    input_.issuer = keys_.issuer;
    input_.authorizer_bcrypt = keys_.authorizer.bcrypt;
    input_.system_bcrypt = keys_.system.bcrypt;
  }

  std::string Render(const CalloutConfigInput& in) {
    auto text = RenderCalloutConfig(in);
    EXPECT_TRUE(text.ok()) << text.status().ToString();
    return text.ok() ? *text : "";
  }

  std::string tool_;
  CalloutKeys keys_;
  CalloutConfigInput input_;
};

TEST_F(CalloutConfigTest, PassesTheServersCheck) {
  for (int64_t max_payload : {int64_t{16} << 20, int64_t{64} << 20}) {
    CalloutConfigInput in = input_;
    in.max_payload = max_payload;
    in.account = "tenants_a-1";
    TempDir dir;
    dir.WriteFile("switchboard.conf", Render(in));
    std::string main_conf =
        dir.WriteFile("nats.conf", "listen: \"127.0.0.1:4222\"\ninclude \"switchboard.conf\"\n");
    auto r = testing::Run({tool_, "-t", "-c", main_conf});
    EXPECT_EQ(r.exit_code, 0) << max_payload << "\n" << r.out << r.err;
  }
}

TEST_F(CalloutConfigTest, LocalUsersLogInAndEveryoneElseGoesToTheCallout) {
  CalloutConfigInput in = input_;
  in.timeout_seconds = 1;  // nobody answers the callout here: refused after 1 s
  const std::string text = Render(in);
  // The rendered text after NatsServer's `listen` line (it adds no
  // max_payload: the text sets it); PassesTheServersCheck covers the
  // include.
  auto server = std::make_unique<NatsServer>(text, 0, tool_);
  ASSERT_TRUE(server->ok()) << server->Log();

  // The system user is in SYS (it may ping every server) and never goes
  // to the callout: nobody answers it, and it still gets in.
  auto sys =
      Connect(server->url(), std::string(api::kCalloutSystemUsername), keys_.system.password);
  ASSERT_TRUE(sys->connected()) << sys->error() << "\n" << server->Log();

  // The authorizer is in SWITCHBOARD_AUTH, may subscribe to the callout
  // subject, and bypasses the callout (auth_users).
  auto auth =
      Connect(server->url(), std::string(api::kAuthorizerUsername), keys_.authorizer.password);
  ASSERT_TRUE(auth->connected()) << auth->error() << "\n" << server->Log();
  ASSERT_TRUE(auth->Subscribe(std::string(api::kAuthCalloutSubject)));

  const std::string reply = sys->Request("$SYS.REQ.SERVER.PING.CONNZ", R"({"auth":true})");
  ASSERT_FALSE(reply.empty()) << server->Log();
  json connz = json::parse(reply, nullptr, false);
  std::map<std::string, std::string> account_of;
  for (const auto& c : connz["data"].value("connections", json::array())) {
    account_of[c.value("authorized_user", "")] = c.value("account", "");
  }
  EXPECT_EQ(account_of[std::string(api::kAuthorizerUsername)], api::kCalloutAuthAccount) << connz;
  EXPECT_EQ(account_of[std::string(api::kCalloutSystemUsername)], api::kCalloutSystemAccount)
      << connz;

  // Anyone else is handed to the callout: the request reaches the
  // authorizer's subscription, and with no answer the user is refused.
  auto stranger = Connect(server->url(), "team-a-hatchet", "some-password");
  EXPECT_FALSE(stranger->connected());
  EXPECT_THAT(stranger->error(), HasSubstr("Authorization Violation"));
  auto request = auth->NextMessage();
  ASSERT_TRUE(request.has_value()) << "the callout was not asked\n" << server->Log();
  EXPECT_FALSE(request->reply.empty());

  // A local user with a wrong password is refused by the config itself.
  auto wrong = Connect(server->url(), std::string(api::kCalloutSystemUsername), "not-it");
  EXPECT_FALSE(wrong->connected());
}

// One request answered the way the authorizer answers it
// (DecideAuthorization, then a user JWT named by its connection_name):
// the user lands in the directory's account, and connz reports the JWT's
// name, which is what ConnectionsToClose reads.
TEST_F(CalloutConfigTest, AnAllowedUserIsNamedByItsGeneration) {
  auto server = std::make_unique<NatsServer>(Render(input_), 0, tool_);
  ASSERT_TRUE(server->ok()) << server->Log();
  auto issuer = natsauth::KeyPair::FromSeed(keys_.issuer_seed);
  ASSERT_TRUE(issuer.ok());
  auto auth =
      Connect(server->url(), std::string(api::kAuthorizerUsername), keys_.authorizer.password);
  ASSERT_TRUE(auth->connected()) << auth->error() << "\n" << server->Log();
  ASSERT_TRUE(auth->Subscribe(std::string(api::kAuthCalloutSubject)));

  CredentialState state;
  state.current = {.username = "team-a-hatchet", .password = "pw-a", .bcrypt = ""};
  state.rotation_count = 3;
  Directory directory = switchboard::testing::DirectoryOf(
      {switchboard::testing::DirectoryEntryOf("a", "hatchet", "hatchet.a", state)}, "nats",
      "shared", std::string(api::kDefaultCalloutAccount));

  // Answers one request; returns the decision's reason.
  auto answer_one = [&]() -> std::string {
    auto msg = auth->NextMessage();
    if (!msg) return "no request";
    const auto now = static_cast<int64_t>(std::time(nullptr));
    auto request = natsauth::DecodeAuthorizationRequest(msg->data, now, issuer->public_key());
    if (!request.ok()) return request.status().ToString();
    AuthorizationDecision d = DecideAuthorization(directory, request->connect_opts.user,
                                                  request->connect_opts.pass, Clock::now());
    natsauth::AuthorizationResponseClaims response;
    response.claims = {
        .audience = request->server_id.id, .issued_at = now, .subject = request->user_nkey};
    if (d.denial == Denial::kNone) {
      natsauth::UserClaims user;
      user.claims = {.audience = d.account,
                     .issued_at = now,
                     .name = d.connection_name,
                     .subject = request->user_nkey};
      user.pub.allow = user.sub.allow = d.allow;
      auto jwt = natsauth::EncodeUserClaims(user, *issuer);
      if (!jwt.ok()) return jwt.status().ToString();
      response.jwt = *jwt;
    } else {
      response.error = d.message;
    }
    auto token = natsauth::EncodeAuthorizationResponse(response, *issuer);
    if (!token.ok()) return token.status().ToString();
    if (!auth->Publish(msg->reply, *token)) return "publishing the answer failed";
    return std::string(DenialReason(d.denial));
  };

  std::unique_ptr<Client> engine;
  std::thread connecting([&] { engine = Connect(server->url(), "team-a-hatchet", "pw-a"); });
  EXPECT_EQ(answer_one(), "Allowed");
  connecting.join();
  ASSERT_TRUE(engine->connected()) << engine->error() << "\n" << server->Log();

  std::unique_ptr<Client> wrong;
  std::thread refused([&] { wrong = Connect(server->url(), "team-a-hatchet", "pw-b"); });
  EXPECT_EQ(answer_one(), "WrongPassword");
  refused.join();
  EXPECT_FALSE(wrong->connected());
  EXPECT_THAT(wrong->error(), HasSubstr("Authorization Violation"));

  auto sys =
      Connect(server->url(), std::string(api::kCalloutSystemUsername), keys_.system.password);
  ASSERT_TRUE(sys->connected()) << sys->error();
  const std::string reply = sys->Request("$SYS.REQ.SERVER.PING.CONNZ", R"({"auth":true})");
  ASSERT_FALSE(reply.empty());
  json connz = json::parse(reply, nullptr, false);
  std::vector<LiveConnection> live;
  const std::string server_id = connz["server"].value("id", "");
  for (const auto& c : connz["data"].value("connections", json::array())) {
    live.push_back({server_id, c.value("cid", uint64_t{0}), c.value("account", ""),
                    c.value("authorized_user", "")});
  }
  const LiveConnection* mine = nullptr;
  for (const auto& c : live) {
    if (c.account == api::kDefaultCalloutAccount) mine = &c;
  }
  ASSERT_NE(mine, nullptr) << connz;
  EXPECT_EQ(mine->name, "team-a-hatchet#3") << connz;
  EXPECT_THAT(ConnectionsToClose(directory, live, Clock::now()), ::testing::IsEmpty());
  // Once the password retires, that connection is the one to close.
  // (a rotation to another user name, this one's password retired now).
  CredentialState rotated;
  rotated.previous = state.current;
  rotated.current = {.username = "team-a-hatchet-r4", .password = "pw-a4", .bcrypt = ""};
  rotated.phase = RotationPhase::kRetiring;
  rotated.rotation_count = 4;
  rotated.retires_at = Clock::now();
  Directory retired = switchboard::testing::DirectoryOf(
      {switchboard::testing::DirectoryEntryOf("a", "hatchet", "hatchet.a", rotated,
                                              "team-a-hatchet")},
      "nats", "shared", std::string(api::kDefaultCalloutAccount));
  auto close = ConnectionsToClose(retired, live, Clock::now());
  ASSERT_EQ(close.size(), 1u);
  EXPECT_EQ(close[0], *mine);
}

}  // namespace
}  // namespace switchboard::operator_logic
