// AuthorizerChecks against real nats-server-callout processes (the tools
// cache's, built by scripts/build-tools.sh) running the static config the
// operator renders (RenderCalloutConfig with PlanCalloutKeys' keys): the
// system user's SUBSZ ping through pubsub::NatsClient, counted by
// DecideAuthorizerAvailability. Two routed servers, so the test also pins
// what SUBSZ means: only the server an authorizer is connected to counts
// it. The "authorizer" is a queue subscription on the callout subject,
// which is all the ping can see. A missing tool is a failure, not a skip.
#include "authorizer_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <condition_variable>
#include <fstream>
#include <mutex>

#include "switchboard/api/constants.h"
#include "switchboard/operator_logic/callout.h"
#include "switchboard/operator_logic/callout_status.h"
#include "switchboard/pubsub/nats_pubsub.h"
#include "switchboard/testing/nats_client.h"
#include "switchboard/testing/nats_server.h"
#include "switchboard/testing/net.h"
#include "switchboard/testing/tool_path.h"
#include "switchboard/testing/wait.h"

namespace switchboard::operator_controller {
namespace {

namespace logic = ::switchboard::operator_logic;
using ::testing::HasSubstr;
constexpr auto kDeadline = std::chrono::seconds(15);

// A connection as the authorizer user with a queue subscription on the
// callout subject, as the authorizer subscribes. Synchronous: no callback
// outlives it.
class FakeAuthorizer {
 public:
  FakeAuthorizer(const std::string& url, const std::string& password)
      : client_(url, std::string(api::kAuthorizerUsername), password) {
    ok_ = client_.connected() && client_.Subscribe(std::string(api::kAuthCalloutSubject),
                                                   std::string(api::kAuthorizerQueueGroup));
  }
  bool ok() const { return ok_; }

 private:
  testing::NatsTestClient client_;
  bool ok_ = false;
};

class AuthorizerChecksTest : public switchboard::testing::NatsLibraryTest {
 protected:
  void SetUp() override {
    const std::string tool = switchboard::testing::ToolPath("nats-server-callout");
    ASSERT_EQ(access(tool.c_str(), X_OK), 0)
        << tool << " is missing: build it with `bash scripts/build-tools.sh nats-server-callout`";
    auto plan = logic::PlanCalloutKeys(std::nullopt);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    keys_ = plan->keys;
    logic::CalloutConfigInput in;
    in.server_ns = "nats";
    in.server_name = "shared";
    in.issuer = keys_.issuer;
    in.authorizer_bcrypt = keys_.authorizer.bcrypt;
    in.system_bcrypt = keys_.system.bcrypt;
    auto text = logic::RenderCalloutConfig(in);
    ASSERT_TRUE(text.ok()) << text.status().ToString();
    // Two servers routed to each other: the static config as rendered,
    // plus the cluster block a chart adds.
    const int route_a = switchboard::testing::FreePort();
    const int route_b = switchboard::testing::FreePort();
    auto cluster = [&](int own, int other) {
      return *text + "\ncluster {\n  name: sb\n  listen: 127.0.0.1:" + std::to_string(own) +
             "\n  routes: [nats-route://127.0.0.1:" + std::to_string(other) + "]\n}\n";
    };
    a_ = std::make_unique<switchboard::testing::NatsServer>(cluster(route_a, route_b), 0, tool);
    b_ = std::make_unique<switchboard::testing::NatsServer>(cluster(route_b, route_a), 0, tool);
    ASSERT_TRUE(a_->ok()) << a_->Log();
    ASSERT_TRUE(b_->ok()) << b_->Log();
  }

  // Runs one check to its end and decides on it.
  logic::AuthorizerAvailability Check(const std::string& password) {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    AuthorizerChecks checks([&](const std::string&) {
      std::lock_guard lock(mu);
      done = true;
      cv.notify_all();
    });
    PingRequest g;
    g.connection.urls = a_->url();
    g.connection.username = std::string(api::kCalloutSystemUsername);
    g.connection.password = password;
    g.connection.connect_timeout = std::chrono::seconds(5);
    g.subject = std::string(logic::kAuthorizerPingSubject);
    g.body = logic::AuthorizerPingBody();
    g.window = std::chrono::milliseconds(1000);
    checks.Submit("nats/shared", "fp", g);
    EXPECT_TRUE(checks.Busy("nats/shared"));
    std::unique_lock lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, kDeadline, [&] { return done; }));
    auto last = checks.Latest("nats/shared");
    EXPECT_TRUE(last.has_value());
    if (!last) return {};
    EXPECT_EQ(last->fingerprint, "fp");
    EXPECT_FALSE(checks.Busy("nats/shared"));
    return logic::DecideAuthorizerAvailability(last->replies);
  }

  // Both servers answer once their route is up; until then only one does.
  logic::AuthorizerAvailability CheckBoth(const std::string& password) {
    logic::AuthorizerAvailability a;
    switchboard::testing::WaitFor(
        [&] {
          a = Check(password);
          return a.servers == 2;
        },
        kDeadline);
    return a;
  }

  logic::CalloutKeys keys_;
  std::unique_ptr<switchboard::testing::NatsServer> a_, b_;
};

TEST_F(AuthorizerChecksTest, CountsTheServersWithAnAuthorizerConnected) {
  auto none = CheckBoth(keys_.system.password);
  EXPECT_EQ(none.servers, 2) << none.message << "\n" << a_->Log();
  EXPECT_EQ(none.authorizers, 0);
  EXPECT_EQ(none.status, "False");
  EXPECT_EQ(none.reason, logic::reasons::kNoAuthorizer);

  {
    FakeAuthorizer on_a(a_->url(), keys_.authorizer.password);
    ASSERT_TRUE(on_a.ok()) << a_->Log();
    auto one = CheckBoth(keys_.system.password);
    EXPECT_EQ(one.authorizers, 1) << one.message;
    // b has none of its own, but its requests reach a's over the route.
    EXPECT_EQ(one.status, "True");
    EXPECT_THAT(one.message, HasSubstr("1 of 2"));
    EXPECT_THAT(one.message, HasSubstr("over the cluster's routes"));

    FakeAuthorizer on_b(b_->url(), keys_.authorizer.password);
    ASSERT_TRUE(on_b.ok()) << b_->Log();
    auto both = CheckBoth(keys_.system.password);
    EXPECT_EQ(both.authorizers, 2) << both.message;
    EXPECT_EQ(both.status, "True");
    EXPECT_EQ(both.reason, logic::reasons::kAuthorizersSubscribed);
  }
  // Gone again: counted as gone.
  switchboard::testing::WaitFor([&] { return Check(keys_.system.password).authorizers == 0; },
                                kDeadline);
  EXPECT_EQ(Check(keys_.system.password).authorizers, 0);
}

TEST_F(AuthorizerChecksTest, AWrongSystemPasswordIsUnknownNotNoAuthorizer) {
  auto a = Check("not-the-password");
  EXPECT_EQ(a.status, "Unknown");
  EXPECT_EQ(a.reason, logic::reasons::kServerUnreachable);
  EXPECT_THAT(a.message, HasSubstr("switchboard-system"));
  EXPECT_THAT(a.message, ::testing::Not(HasSubstr("not-the-password")));
}

}  // namespace
}  // namespace switchboard::operator_controller
