// ServerSession against a real nats-server in auth callout mode
// (nats-server-callout from the tools cache; a missing binary fails), with
// Directories built by hand: no Kubernetes. Each test starts its own server
// on a free loopback port with the static config of callout mode.
#include "switchboard/authorizer/session.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nats/nats.h>
#include <prometheus/registry.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <ctime>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "nats_handles.h"
#include "nats_library.h"
#include "switchboard/api/constants.h"
#include "switchboard/authorizer/authorizer.h"
#include "switchboard/natsauth/nkey.h"
#include "switchboard/natsauth/operator_jwt.h"
#include "switchboard/operator_logic/callout.h"
#include "switchboard/operator_logic/operator_mode_claims.h"
#include "switchboard/operator_logic/operator_mode_keys.h"
#include "switchboard/pubsub/nats_client.h"
#include "switchboard/testing/callout_config.h"
#include "switchboard/testing/nats_client.h"
#include "switchboard/testing/nats_server.h"
#include "switchboard/testing/served_server.h"
#include "switchboard/testing/temp_dir.h"
#include "switchboard/testing/test_certs.h"
#include "switchboard/testing/tool_path.h"
#include "switchboard/testing/wait.h"

namespace switchboard::authorizer {
namespace {

namespace logic = operator_logic;
using nlohmann::json;
using pubsub::internal::NatsConnectionPtr;
using pubsub::internal::NatsMsgPtr;
using pubsub::internal::NatsOptionsPtr;
using pubsub::internal::NatsSubscriptionPtr;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr auto kDeadline = std::chrono::seconds(15);
constexpr char kAuthorizerPassword[] = "authorizer-pw";
constexpr char kSystemPassword[] = "system-pw";

// The static config of callout mode, as the operator renders it.
std::string CalloutConfig(const std::string& issuer) {
  auto config = switchboard::testing::CalloutConfig({.issuer = issuer,
                                                     .authorizer_password = kAuthorizerPassword,
                                                     .system_password = kSystemPassword});
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  return config.ok() ? *config : std::string();
}

using Client = switchboard::testing::NatsTestClient;

// The value of a counter family's samples whose labels include `labels`.
double CounterSum(prometheus::Registry& registry, const std::string& family,
                  const std::map<std::string, std::string>& labels = {}) {
  double sum = 0;
  for (const auto& f : registry.Collect()) {
    if (f.name != family) continue;
    for (const auto& m : f.metric) {
      bool match = true;
      for (const auto& [k, v] : labels) {
        bool found = false;
        for (const auto& l : m.label) found |= l.name == k && l.value == v;
        match &= found;
      }
      if (match) sum += m.counter.value + m.gauge.value;
    }
  }
  return sum;
}

logic::DirectoryEntry Entry(std::string user, std::string password, std::string prefix,
                            int generation = 0) {
  return switchboard::testing::DirectoryUser(std::move(user), std::move(password),
                                             std::move(prefix), generation);
}

class SessionTest : public switchboard::testing::NatsLibraryTest {
 protected:
  void SetUp() override {
    std::string tool = switchboard::testing::ToolPath("nats-server-callout");
    ASSERT_EQ(access(tool.c_str(), X_OK), 0)
        << tool << " is missing: build it with `bash scripts/build-tools.sh nats-server-callout`";
    auto issuer = natsauth::KeyPair::Generate(natsauth::KeyType::kAccount);
    ASSERT_TRUE(issuer.ok());
    issuer_ = std::make_shared<const natsauth::KeyPair>(std::move(issuer).value());
    server_ = std::make_unique<switchboard::testing::NatsServer>(
        CalloutConfig(issuer_->public_key()), 0, tool);
    ASSERT_TRUE(server_->ok()) << server_->Log();
    options_.reconnect_wait = std::chrono::milliseconds(200);
    options_.gather_wait = std::chrono::milliseconds(300);
    options_.kick_after = std::chrono::milliseconds(0);
  }

  std::shared_ptr<const ServedServer> Served(std::vector<logic::DirectoryEntry> entries) {
    return switchboard::testing::MakeServedServer({.urls = server_->url(),
                                                   .issuer = issuer_,
                                                   .authorizer_password = kAuthorizerPassword,
                                                   .system_password = kSystemPassword},
                                                  entries);
  }

  std::unique_ptr<ServerSession> Start(std::shared_ptr<const ServedServer> served,
                                       Metrics* metrics) {
    auto session = std::make_unique<ServerSession>(std::move(served), options_, metrics);
    EXPECT_TRUE(
        switchboard::testing::WaitFor([&] { return session->Health().subscribed; }, kDeadline))
        << session->Health().error << "\n"
        << server_->Log();
    return session;
  }

  json Connz() {
    auto client = pubsub::NatsClient::Connect({.urls = server_->url(),
                                               .username = std::string(api::kCalloutSystemUsername),
                                               .password = kSystemPassword});
    if (!client.ok()) return json();
    auto r = (*client)->Request("$SYS.REQ.SERVER.PING.CONNZ", R"({"auth":true,"acc":"HATCHET"})",
                                std::chrono::seconds(5));
    return r.ok() ? json::parse(*r, nullptr, false) : json();
  }

  SessionOptions options_;
  std::shared_ptr<const natsauth::KeyPair> issuer_;
  std::unique_ptr<switchboard::testing::NatsServer> server_;
};

TEST_F(SessionTest, RightPasswordConnectsAndRoundTripsOnItsPrefix) {
  Metrics metrics(std::make_shared<prometheus::Registry>());
  auto session = Start(Served({Entry("inst-a", "pw-a", "hatchet.a", 2)}), &metrics);
  Client a(server_->url(), "inst-a", "pw-a");
  ASSERT_TRUE(a.connected()) << a.error() << "\n" << server_->Log();
  ASSERT_TRUE(a.Subscribe("hatchet.a.*"));
  ASSERT_TRUE(a.Publish("hatchet.a.x", "hello"));
  EXPECT_EQ(a.Next(), "hello");
  EXPECT_EQ(CounterSum(*metrics.registry(), "switchboard_authorizer_decisions_total",
                       {{"result", "allowed"}}),
            1);
  EXPECT_EQ(CounterSum(*metrics.registry(), "switchboard_authorizer_subscribed",
                       {{"namespace", "nats"}, {"name", "main"}}),
            1);

  // What connz shows for a callout user: the user JWT's name is the
  // connection's authorized user (what ConnectionsToClose reads), in the
  // user JWT's account; the CONNECT's own user name is not shown.
  json connz = Connz();
  ASSERT_TRUE(connz.is_object()) << connz;
  const json conns = connz["data"].value("connections", json::array());
  ASSERT_EQ(conns.size(), 1u) << connz;
  EXPECT_EQ(conns[0].value("authorized_user", ""), logic::CalloutConnectionName("inst-a", 2))
      << conns[0];
  EXPECT_EQ(conns[0].value("account", ""), "HATCHET");
}

// After a switch to isolation: Accounts, a server not yet restarted still
// runs the Permissions config and refuses the operator-mode login: the
// member logs in with the password instead and answers that server in
// config mode, so its new connections are admitted (into the configured
// account) through the roll rather than refused after the callout timeout.
TEST_F(SessionTest, AServerNotRestartedSinceASwitchToAccountsIsServedInItsOwnIsolation) {
  auto seeds = logic::PlanOperatorModeSeeds(std::nullopt, 1'800'000'000);
  ASSERT_TRUE(seeds.ok()) << seeds.status().ToString();
  auto mode = OperatorModeOf(seeds->seeds, issuer_->Seed());
  ASSERT_TRUE(mode.ok()) << mode.status().ToString();
  auto accounts = std::make_shared<ServedServer>(*Served({Entry("inst-a", "pw-a", "hatchet.a")}));
  accounts->operator_mode = *mode;
  accounts->operator_mode_keys = *mode;
  ASSERT_EQ(LoginsOf(*accounts).size(), 2u);

  Metrics metrics(std::make_shared<prometheus::Registry>());
  auto session = Start(accounts, &metrics);
  SessionHealth h = session->Health();
  ASSERT_EQ(h.members.size(), 1u);
  EXPECT_TRUE(h.members[0].other_isolation);
  EXPECT_TRUE(h.members[0].subscribed) << h.members[0].error;
  EXPECT_EQ(h.other_isolation, 1);
  const std::map<std::string, std::string> labels = {{"namespace", "nats"}, {"name", "main"}};
  EXPECT_TRUE(switchboard::testing::WaitFor(
      [&] {
        return CounterSum(*metrics.registry(), "switchboard_authorizer_other_isolation_servers",
                          labels) == 1;
      },
      kDeadline));

  Client a(server_->url(), "inst-a", "pw-a");
  ASSERT_TRUE(a.connected()) << a.error() << "\n" << server_->Log();
  ASSERT_TRUE(a.Subscribe("hatchet.a.*"));
  ASSERT_TRUE(a.Publish("hatchet.a.x", "hello"));
  EXPECT_EQ(a.Next(), "hello");
  json connz = Connz();
  ASSERT_TRUE(connz.is_object()) << connz;
  const json conns = connz["data"].value("connections", json::array());
  ASSERT_EQ(conns.size(), 1u) << connz;
  EXPECT_EQ(conns[0].value("account", ""), "HATCHET");
  Client wrong(server_->url(), "inst-a", "not-pw-a");
  EXPECT_FALSE(wrong.connected());

  // Served in Permissions, the same server takes the first login.
  Metrics served_as_run(std::make_shared<prometheus::Registry>());
  auto permissions = Start(Served({Entry("inst-a", "pw-a", "hatchet.a")}), &served_as_run);
  EXPECT_FALSE(permissions->Health().members.at(0).other_isolation);
  EXPECT_EQ(permissions->Health().other_isolation, 0);
  EXPECT_TRUE(switchboard::testing::WaitFor(
      [&] {
        return CounterSum(*served_as_run.registry(), "switchboard_authorizer_subscribed_servers",
                          labels) == 1;
      },
      kDeadline));
  EXPECT_EQ(CounterSum(*served_as_run.registry(), "switchboard_authorizer_other_isolation_servers",
                       labels),
            0);
}

// The other way: after a switch back to isolation: Permissions, a server
// not yet restarted still runs NATS operator mode and refuses the password
// login; the member logs in with the operator-mode JWT the callout Secret
// keeps and answers in operator mode, so a new connection lands in its
// installation's account, which that server's store holds.
TEST_F(SessionTest, AServerStillInOperatorModeAfterASwitchToPermissionsIsServedInIt) {
  auto seeds = logic::PlanOperatorModeSeeds(std::nullopt, std::time(nullptr));
  ASSERT_TRUE(seeds.ok()) << seeds.status().ToString();
  auto mode = OperatorModeOf(seeds->seeds, issuer_->Seed());
  ASSERT_TRUE(mode.ok()) << mode.status().ToString();
  const logic::OperatorModeKeyPairs& keys = (*mode)->keys;
  switchboard::testing::TempDir store;
  auto config = switchboard::testing::OperatorModeConfig(keys, store.path() + "/resolver",
                                                         std::time(nullptr));
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  switchboard::testing::NatsServer opmode(*config, 0,
                                          switchboard::testing::ToolPath("nats-server-callout"));
  ASSERT_TRUE(opmode.ok()) << opmode.Log();

  // The installation's account in the store, as the operator pushed it
  // before the switch back.
  pubsub::NatsOptions sys{.urls = opmode.url()};
  ASSERT_TRUE(UseOperatorModeUser(sys, **mode, /*system=*/true).ok());
  auto system = pubsub::NatsClient::Connect(sys);
  ASSERT_TRUE(system.ok()) << system.status().ToString();
  auto account = logic::InstallationAccountKey(keys.installation_signing, "team", "inst-a");
  ASSERT_TRUE(account.ok());
  auto claims = logic::InstallationAccountClaims(
      {.ns = "team", .name = "inst-a", .account = account->public_key()}, keys.Public(),
      std::time(nullptr));
  ASSERT_TRUE(claims.ok()) << claims.status().ToString();
  auto pushed = (*system)->Request(
      "$SYS.REQ.CLAIMS.UPDATE", natsauth::EncodeAccountClaims(*claims, keys.operator_key).value(),
      kDeadline);
  ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
  EXPECT_THAT(*pushed, HasSubstr("\"code\":200"));

  auto permissions =
      std::make_shared<ServedServer>(*Served({Entry("inst-a", "pw-a", "hatchet.a")}));
  permissions->urls = opmode.url();
  permissions->operator_mode_keys = *mode;
  ASSERT_EQ(LoginsOf(*permissions).size(), 2u);
  auto session = std::make_unique<ServerSession>(permissions, options_, nullptr);
  ASSERT_TRUE(
      switchboard::testing::WaitFor([&] { return session->Health().subscribed; }, kDeadline))
      << session->Health().error << "\n"
      << opmode.Log();
  EXPECT_TRUE(session->Health().members.at(0).other_isolation);

  Client a(opmode.url(), "inst-a", "pw-a");
  ASSERT_TRUE(a.connected()) << a.error() << "\n" << opmode.Log();
  ASSERT_TRUE(a.Subscribe("hatchet.a.*"));
  ASSERT_TRUE(a.Publish("hatchet.a.x", "hello"));
  EXPECT_EQ(a.Next(), "hello");
  auto connz =
      (*system)->Request("$SYS.REQ.SERVER.PING.CONNZ",
                         R"({"auth":true,"acc":")" + account->public_key() + R"("})", kDeadline);
  ASSERT_TRUE(connz.ok()) << connz.status().ToString();
  EXPECT_THAT(*connz, HasSubstr(logic::CalloutConnectionName("inst-a", 0)));
}

TEST_F(SessionTest, WrongPasswordAndUnknownUserAreRefusedByAnAnswer) {
  Metrics metrics(std::make_shared<prometheus::Registry>());
  auto session = Start(Served({Entry("inst-a", "pw-a", "hatchet.a")}), &metrics);
  {
    Client wrong(server_->url(), "inst-a", "not-pw-a");
    EXPECT_FALSE(wrong.connected());
    EXPECT_THAT(wrong.error(), HasSubstr("Authorization Violation"));
  }
  {
    Client unknown(server_->url(), "inst-x", "pw-a");
    EXPECT_FALSE(unknown.connected());
    EXPECT_THAT(unknown.error(), HasSubstr("Authorization Violation"));
  }
  // Refused by the response, not by the timeout: both were decided and
  // answered, and the server logged the response's error.
  EXPECT_EQ(
      CounterSum(*metrics.registry(), "switchboard_authorizer_decisions_total",
                 {{"result", "denied"},
                  {"reason", std::string(logic::DenialReason(logic::Denial::kWrongPassword))}}),
      1);
  EXPECT_EQ(CounterSum(*metrics.registry(), "switchboard_authorizer_decisions_total",
                       {{"result", "denied"},
                        {"reason", std::string(logic::DenialReason(logic::Denial::kUnknownUser))}}),
            1);
  // The server logs an answered refusal's error (a timeout says "timeout").
  std::string log =
      server_->LogWith("Auth callout service returned an error: user \"inst-x\"", kDeadline);
  EXPECT_THAT(log, HasSubstr("Auth callout service returned an error: user \"inst-x\""));
  EXPECT_THAT(log, HasSubstr("Auth callout service returned an error: user \"inst-a\""));
  EXPECT_THAT(log, Not(HasSubstr("timeout"))) << log;
  EXPECT_THAT(log, Not(HasSubstr("not-pw-a"))) << log;
}

TEST_F(SessionTest, AnotherPrefixIsDenied) {
  auto session =
      Start(Served({Entry("inst-a", "pw-a", "hatchet.a"), Entry("inst-b", "pw-b", "hatchet.b")}),
            nullptr);
  Client a(server_->url(), "inst-a", "pw-a");
  Client b(server_->url(), "inst-b", "pw-b");
  ASSERT_TRUE(a.connected()) << a.error();
  ASSERT_TRUE(b.connected()) << b.error();
  ASSERT_TRUE(b.Subscribe("hatchet.b.*"));
  ASSERT_TRUE(a.Publish("hatchet.b.x", "intrusion"));
  EXPECT_TRUE(a.WaitForError("Permissions Violation for Publish to \"hatchet.b.x\""));
  ASSERT_TRUE(a.Subscribe("hatchet.b.*"));
  EXPECT_TRUE(a.WaitForError("Permissions Violation for Subscription to \"hatchet.b.*\""));
  // b's first message is its own: nothing of a's reached it.
  ASSERT_TRUE(b.Publish("hatchet.b.y", "own"));
  EXPECT_EQ(b.Next(), "own");
}

TEST_F(SessionTest, TwoAuthorizersInTheQueueGroupAnswerEachRequestOnce) {
  Metrics m1(std::make_shared<prometheus::Registry>());
  Metrics m2(std::make_shared<prometheus::Registry>());
  auto served = Served({Entry("inst-a", "pw-a", "hatchet.a")});
  auto s1 = Start(served, &m1);
  auto s2 = Start(served, &m2);
  constexpr int kClients = 12;
  for (int i = 0; i < kClients; ++i) {
    Client c(server_->url(), "inst-a", "pw-a");
    EXPECT_TRUE(c.connected()) << c.error();
  }
  const std::string family = "switchboard_authorizer_decisions_total";
  EXPECT_EQ(CounterSum(*m1.registry(), family) + CounterSum(*m2.registry(), family), kClients);
  // Neither answered twice: a second answer would be a second decision.
  EXPECT_EQ(CounterSum(*m1.registry(), family, {{"result", "allowed"}}) +
                CounterSum(*m2.registry(), family, {{"result", "allowed"}}),
            kClients);
}

TEST_F(SessionTest, TheSweepClosesARemovedUsersConnection) {
  Metrics metrics(std::make_shared<prometheus::Registry>());
  auto session =
      Start(Served({Entry("inst-a", "pw-a", "hatchet.a"), Entry("inst-b", "pw-b", "hatchet.b")}),
            &metrics);
  // The kicks counter exists from the start, at 0: increase() sees the first.
  bool kicks_series = false;
  for (const auto& f : metrics.registry()->Collect()) {
    kicks_series |= f.name == "switchboard_authorizer_kicks_total" && f.metric.size() == 1;
  }
  EXPECT_TRUE(kicks_series);
  EXPECT_EQ(CounterSum(*metrics.registry(), "switchboard_authorizer_kicks_total"), 0);
  Client a(server_->url(), "inst-a", "pw-a");
  Client b(server_->url(), "inst-b", "pw-b");
  ASSERT_TRUE(a.connected()) << a.error();
  ASSERT_TRUE(b.connected()) << b.error();
  // inst-a is deleted: the directory narrows, a sweep follows at once.
  session->Update(Served({Entry("inst-b", "pw-b", "hatchet.b")}));
  EXPECT_TRUE(a.WaitClosed()) << server_->Log();
  EXPECT_TRUE(switchboard::testing::WaitFor([&] { return session->Kicks() == 1; }, kDeadline));
  EXPECT_EQ(CounterSum(*metrics.registry(), "switchboard_authorizer_kicks_total"), 1);
  // The one still accepted stays.
  ASSERT_TRUE(b.Subscribe("hatchet.b.*"));
  ASSERT_TRUE(b.Publish("hatchet.b.x", "still here"));
  EXPECT_EQ(b.Next(), "still here");
  // And inst-a cannot come back.
  Client again(server_->url(), "inst-a", "pw-a");
  EXPECT_FALSE(again.connected());
}

TEST_F(SessionTest, ARetiredPasswordsConnectionIsClosedWhenItRetires) {
  // A rotation that keeps the user name, its old password retiring.
  logic::CredentialState state;
  state.current = {.username = "inst-a", .password = "pw-new", .bcrypt = ""};
  state.previous = logic::Credentials{.username = "inst-a", .password = "pw-old", .bcrypt = ""};
  state.phase = logic::RotationPhase::kRetiring;
  state.rotation_count = 1;
  state.retires_at = logic::Clock::now() + std::chrono::seconds(2);
  auto served = Served(
      {switchboard::testing::DirectoryEntryOf("team", "inst-a", "hatchet.a", std::move(state))});
  auto session = Start(served, nullptr);
  Client old_pw(server_->url(), "inst-a", "pw-old");
  Client new_pw(server_->url(), "inst-a", "pw-new");
  ASSERT_TRUE(old_pw.connected()) << old_pw.error();
  ASSERT_TRUE(new_pw.connected()) << new_pw.error();
  // No directory change: the session sweeps when the old password retires.
  EXPECT_TRUE(old_pw.WaitClosed()) << server_->Log();
  ASSERT_TRUE(new_pw.Subscribe("hatchet.a.*"));
  ASSERT_TRUE(new_pw.Publish("hatchet.a.x", "new"));
  EXPECT_EQ(new_pw.Next(), "new");
}

TEST_F(SessionTest, ALaggingReplicaWaitsBeforeClosing) {
  // Another replica let inst-a in; this one does not know it yet.
  auto ahead = Start(Served({Entry("inst-a", "pw-a", "hatchet.a")}), nullptr);
  Client a(server_->url(), "inst-a", "pw-a");
  ASSERT_TRUE(a.connected()) << a.error();
  options_.kick_after = std::chrono::hours(1);
  auto behind = Start(Served({}), nullptr);
  const int sweeps = behind->Sweeps();
  behind->RequestSweep();
  ASSERT_TRUE(switchboard::testing::WaitFor([&] { return behind->Sweeps() > sweeps; }, kDeadline));
  EXPECT_EQ(behind->Kicks(), 0);
  ASSERT_TRUE(a.Subscribe("hatchet.a.*"));
  ASSERT_TRUE(a.Publish("hatchet.a.x", "alive"));
  EXPECT_EQ(a.Next(), "alive");
}

TEST_F(SessionTest, ReconnectsAfterTheServerRestartsAndDrainsOnDestruction) {
  auto session = Start(Served({Entry("inst-a", "pw-a", "hatchet.a")}), nullptr);
  server_->Stop();
  ASSERT_TRUE(
      switchboard::testing::WaitFor([&] { return !session->Health().connected; }, kDeadline));
  ASSERT_TRUE(server_->Start()) << server_->Log();
  ASSERT_TRUE(
      switchboard::testing::WaitFor([&] { return session->Health().subscribed; }, kDeadline));
  Client a(server_->url(), "inst-a", "pw-a");
  EXPECT_TRUE(a.connected()) << a.error() << "\n" << server_->Log();
}

TEST_F(SessionTest, DestroyingWhileRequestsArriveDrains) {
  Metrics metrics(std::make_shared<prometheus::Registry>());
  auto session = Start(Served({Entry("inst-a", "pw-a", "hatchet.a")}), &metrics);
  std::atomic<bool> done{false};
  std::atomic<int> connected{0};
  std::thread engines([&] {
    while (!done) {
      Client c(server_->url(), "inst-a", "pw-a");
      if (c.connected()) ++connected;
    }
  });
  EXPECT_TRUE(switchboard::testing::WaitFor([&] { return connected >= 5; }, kDeadline));
  session.reset();  // unsubscribes, answers what was queued, closes
  done = true;
  engines.join();
  // Every connect before the session went was answered and allowed.
  EXPECT_GE(CounterSum(*metrics.registry(), "switchboard_authorizer_decisions_total",
                       {{"result", "allowed"}}),
            connected.load());
}

// TLS to a server whose client port requires TLS with a certificate of a
// CA this test makes, with the static config as the operator renders it.
// With another CA the session does not connect, also for a nats:// URL (the
// CA makes TLS required; without TLS there is no plaintext to fall back
// on: the port refuses it).
TEST_F(SessionTest, OverTlsWithTheCalloutSecretsCaAndNeverWithAnother) {
  switchboard::testing::TempDir dir_a, dir_b;
  const auto certs = switchboard::testing::MakeCerts(dir_a.path());
  const auto other = switchboard::testing::MakeCerts(dir_b.path());
  ASSERT_FALSE(certs.ca_pem.empty());
  ASSERT_FALSE(other.ca_pem.empty());
  ASSERT_NE(certs.ca_pem, other.ca_pem);

  switchboard::testing::NatsServer tls_server(
      CalloutConfig(issuer_->public_key()) + "tls {\n  cert_file: \"" + certs.cert +
          "\"\n  key_file: \"" + certs.key + "\"\n}\n",
      0, switchboard::testing::ToolPath("nats-server-callout"));
  ASSERT_TRUE(tls_server.ok()) << tls_server.Log();
  const std::string port = std::to_string(tls_server.port());
  const std::string tls_url = "tls://127.0.0.1:" + port;
  const std::string plain_url = "nats://127.0.0.1:" + port;
  // The system user needs no callout: it counts the authorizer's connections.
  auto system = pubsub::NatsClient::Connect({.urls = tls_url,
                                             .username = std::string(api::kCalloutSystemUsername),
                                             .password = kSystemPassword,
                                             .ca_pem = certs.ca_pem});
  ASSERT_TRUE(system.ok()) << system.status().ToString() << "\n" << tls_server.Log();
  auto authorizer_connections = [&]() -> int {
    auto r = (*system)->Request("$SYS.REQ.SERVER.PING.CONNZ",
                                "{\"acc\":\"" + std::string(api::kCalloutAuthAccount) + "\"}",
                                std::chrono::seconds(5));
    if (!r.ok()) return -1;
    json j = json::parse(*r, nullptr, false);
    return j.is_object() ? j["data"].value("num_connections", -1) : -1;
  };

  auto served = [&](std::string urls, std::string ca) {
    auto s = std::make_shared<ServedServer>(*Served({Entry("inst-a", "pw-a", "hatchet.a")}));
    s->urls = std::move(urls);
    s->ca = std::move(ca);
    return std::shared_ptr<const ServedServer>(std::move(s));
  };

  // Another CA: refused in TLS, for a tls:// URL and for a nats:// one (a CA
  // makes TLS required); reported, and not ready.
  for (const std::string& url : {tls_url, plain_url}) {
    SCOPED_TRACE(url);
    ServerSession wrong(served(url, other.ca_pem), options_, nullptr);
    ASSERT_TRUE(switchboard::testing::WaitFor(
        [&] { return wrong.Health().attempted && wrong.Health().tls_failed; }, kDeadline))
        << wrong.Health().error;
    const SessionHealth h = wrong.Health();
    EXPECT_FALSE(h.connected);
    EXPECT_FALSE(h.subscribed);
    EXPECT_THAT(h.error, HasSubstr("connect:"));
    EXPECT_THAT(h.error, Not(HasSubstr("BEGIN CERTIFICATE")));
    EXPECT_THAT(ReadinessOf(true, {{"nats/main", h}}), HasSubstr("nats/main: TLS refused"));
    EXPECT_EQ(authorizer_connections(), 0);
  }

  // The right CA: subscribed over TLS, and an engine (over TLS, with the
  // same CA) is authorized through it and round-trips on its prefix.
  ServerSession right(served(tls_url, certs.ca_pem), options_, nullptr);
  ASSERT_TRUE(switchboard::testing::WaitFor([&] { return right.Health().subscribed; }, kDeadline))
      << right.Health().error << "\n"
      << tls_server.Log();
  EXPECT_FALSE(right.Health().tls_failed);
  EXPECT_EQ(ReadinessOf(true, {{"nats/main", right.Health()}}), "");
  EXPECT_EQ(authorizer_connections(), 1);
  Client a(tls_url, "inst-a", "pw-a", certs.ca_pem);
  ASSERT_TRUE(a.connected()) << a.error() << "\n" << tls_server.Log();
  ASSERT_TRUE(a.Subscribe("hatchet.a.*"));
  ASSERT_TRUE(a.Publish("hatchet.a.x", "over tls"));
  EXPECT_EQ(a.Next(), "over tls");
  Client wrong_password(tls_url, "inst-a", "nope", certs.ca_pem);
  EXPECT_FALSE(wrong_password.connected());
  EXPECT_THAT(wrong_password.error(), HasSubstr("Authorization Violation"));
}

}  // namespace
}  // namespace switchboard::authorizer
