// Per-installation usage in NATS operator mode (AuthCallout with
// isolation: Accounts) against three routed nats-server-callout (2.15,
// tools cache) on the config the operator renders: the collector's own
// parts — the system user's connection (OperatorModeSystemConnection, a
// user JWT), UsageSource's CONNZ/STATZ/disconnect events, the directory of
// derived installation accounts (OperatorModeUsageDirectoryOf) and
// operator_logic::UsageLedger. Installations' accounts are pushed live as
// the account syncs push them; the authorizer's answer code places each
// username/password engine in its installation's account. N engines of one
// installation, one per server, are N connections of it and of no other;
// the counters follow traffic through an engine closing. A missing tool is
// a failure, not a skip.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "operator_mode_connection.h"
#include "operator_mode_nats.h"
#include "switchboard/authorizer/answer.h"
#include "switchboard/authorizer/operator_mode.h"
#include "switchboard/natsauth/operator_jwt.h"
#include "switchboard/operator_logic/callout.h"
#include "switchboard/operator_logic/operator_mode_claims.h"
#include "switchboard/operator_logic/operator_mode_keys.h"
#include "switchboard/operator_logic/usage.h"
#include "switchboard/pubsub/nats_client.h"
#include "switchboard/testing/callout_responder.h"
#include "switchboard/testing/directory.h"
#include "switchboard/testing/nats_client.h"
#include "switchboard/testing/nats_cluster.h"
#include "switchboard/testing/wait.h"
#include "usage_nats_checks.h"
#include "usage_source.h"

namespace switchboard::operator_controller {
namespace {

namespace logic = ::switchboard::operator_logic;
using nlohmann::json;
using testing::NatsTestClient;
using usage_nats::kDeadline;
using usage_nats::kWindow;
using usage_nats::Sum;

class UsageOperatorModeNatsTest : public testing::NatsLibraryTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartOperatorModeNats(nats_));
    cluster_ = nats_.cluster.get();
    mode_ = nats_.mode;
    const logic::OperatorModeKeyPairs& keys = mode_->keys;

    // The operator's system connection, as the account syncs and the
    // collector make it.
    system_options_ = nats_.system_options;
    system_options_.name = "switchboard-operator-usage";
    auto client = pubsub::NatsClient::Connect(system_options_);
    ASSERT_TRUE(client.ok()) << client.status().ToString() << "\n" << cluster_->Log(0);
    system_ = std::move(client).value();

    // Two installations, team/a and team/b, on one subject prefix: only
    // their accounts wall them off.
    for (const char* name : {"a", "b"}) {
      logic::CredentialState state;
      state.current = {.username = std::string(name) + "-user",
                       .password = std::string("pw-") + name,
                       .bcrypt = ""};
      directory_.Add(
          switchboard::testing::DirectoryEntryOf("team", name, "hatchet.same", std::move(state)));
    }
    directory_.server_ns = "nats";
    directory_.server_name = "main";
    for (const auto& [user, entry] : directory_.by_user) {
      ASSERT_NO_FATAL_FAILURE(PushAccount(entry.ns(), entry.name()));
    }

    // The authorizer: its own answer code and operator-mode signer, as
    // the auth account's user.
    auto authorizer_jwt = logic::AuthorizerUserJwt(keys, UnixNow());
    ASSERT_TRUE(authorizer_jwt.ok());
    NatsTestClient::UserJwt creds{.jwt = *authorizer_jwt, .sign = [this](std::string_view nonce) {
                                    auto sig = mode_->keys.authorizer_user.Sign(nonce);
                                    return sig.ok() ? *sig : std::string();
                                  }};
    responder_ = std::make_unique<testing::CalloutResponder>(
        std::make_unique<NatsTestClient>(cluster_->url(1), creds),
        [this](std::string_view token) -> testing::CalloutResponder::Outcome {
          authorizer::Answer answer =
              authorizer::AnswerRequest(std::string(token), directory_, mode_->keys.auth_account,
                                        mode_->signer, std::chrono::system_clock::now());
          if (answer.result == authorizer::kResultInvalid) return {.error = answer.message};
          return {.reply = std::move(answer.reply)};
        });
    ASSERT_TRUE(responder_->ok()) << responder_->error() << "\n" << cluster_->Log(1);
  }

  void TearDown() override {
    if (responder_) {
      EXPECT_TRUE(responder_->Errors().empty());
    }
    responder_.reset();
    system_.reset();
    nats_.cluster.reset();
  }

  // Pushes installation ns/name's account (its derived key, no limits)
  // and waits until every server's resolver lists it.
  void PushAccount(const std::string& ns, const std::string& name) {
    const logic::OperatorModeKeyPairs& keys = mode_->keys;
    auto account = logic::InstallationAccountKey(keys.installation_signing, ns, name);
    ASSERT_TRUE(account.ok());
    auto claims = logic::InstallationAccountClaims({ns, name, account->public_key(), {}},
                                                   keys.Public(), UnixNow());
    ASSERT_TRUE(claims.ok()) << claims.status().ToString();
    auto jwt = natsauth::EncodeAccountClaims(*claims, keys.operator_key);
    ASSERT_TRUE(jwt.ok());
    auto reply = system_->Request("$SYS.REQ.CLAIMS.UPDATE", *jwt, kDeadline);
    ASSERT_TRUE(reply.ok()) << reply.status().ToString();
    EXPECT_EQ(json::parse(*reply, nullptr, false)["data"].value("code", 0), 200) << *reply;
    ASSERT_TRUE(testing::WaitFor(
        [&] {
          auto lists = system_->RequestAll("$SYS.REQ.CLAIMS.LIST", "", kWindow);
          if (!lists.ok()) return false;
          int holding = 0;
          for (const auto& text : *lists) {
            json j = json::parse(text, nullptr, false);
            if (!j.is_object() || !j.contains("data") || !j["data"].is_array()) continue;
            for (const auto& k : j["data"]) holding += k == account->public_key();
          }
          return holding == cluster_->size();
        },
        kDeadline))
        << "not every resolver lists " << ns << "/" << name;
  }

  OperatorModeNats nats_;
  testing::NatsCluster* cluster_ = nullptr;  // nats_'s
  std::shared_ptr<const authorizer::OperatorMode> mode_;
  pubsub::NatsOptions system_options_;
  std::unique_ptr<pubsub::NatsClient> system_;
  logic::Directory directory_;
  std::unique_ptr<testing::CalloutResponder> responder_;
};

TEST_F(UsageOperatorModeNatsTest, NEnginesOfOneInstallationAreItsConnectionsAndTrafficIsCounted) {
  // One engine of team/a on each server, and one of team/b.
  std::vector<std::string> urls;
  for (int i = 0; i < cluster_->size(); ++i) urls.push_back(cluster_->url(i));
  usage_nats::Engines engines;
  ASSERT_NO_FATAL_FAILURE(
      usage_nats::ConnectEngines(urls, "a-user", "pw-a", "hatchet.same.t", engines,
                                 [&](size_t i) { return cluster_->Log(static_cast<int>(i)); }));
  const int kN = cluster_->size();
  NatsTestClient other(cluster_->url(2), "b-user", "pw-b");
  ASSERT_TRUE(other.connected()) << other.error();

  // Who is who, as the collector derives it: the derived account keys.
  auto directory = logic::OperatorModeUsageDirectoryOf(directory_, mode_->keys.installation_signing,
                                                       {{"team/a", {.max_connections = 10}}});
  ASSERT_TRUE(directory.ok()) << directory.status().ToString();
  EXPECT_EQ(directory->limits.at("team/a").max_connections, 10);
  auto source = UsageSource::Open(system_options_);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  logic::UsageLedger ledger;
  auto round = [&] {
    auto r = (*source)->Collect("", true, kWindow);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (r.ok()) ledger.Round(*directory, *r);
  };

  // Every server answers within the window, but a route's interest and a
  // connection reach CONNZ a moment apart: wait for the full count.
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        round();
        return ledger.Connections("team/a") == kN && ledger.Connections("team/b") == 1;
      },
      kDeadline))
      << "team/a " << ledger.Connections("team/a") << ", team/b " << ledger.Connections("team/b");
  EXPECT_EQ(Sum(ledger, "team/a").subscriptions, kN);
  std::set<std::string> servers_of_a;
  for (const auto& [key, u] : ledger.usage()) {
    EXPECT_TRUE(key.first == "team/a" || key.first == "team/b") << key.first;
    if (key.first == "team/a" && u.connections > 0) {
      EXPECT_EQ(u.connections, 1) << key.second;
      servers_of_a.insert(key.second);
    }
  }
  EXPECT_EQ(static_cast<int>(servers_of_a.size()), kN);

  // 10 messages of 5 bytes from the engine on server 0 reach every
  // subscriber of team/a (one per server) and none of team/b's.
  ASSERT_NO_FATAL_FAILURE(usage_nats::ExpectTrafficCounted(engines, "hatchet.same.t", round, ledger,
                                                           "team/a", "team/b"));

  // The engine on server 2 goes: N-1 connections; the totals keep what
  // it received although its server no longer reports team/a's account.
  ASSERT_NO_FATAL_FAILURE(
      usage_nats::ExpectEngineGoneTotalsKept(engines, 2, round, ledger, "team/a", "team/b"));
  EXPECT_EQ(ledger.Connections("team/a"), kN - 1);

  // And traffic after that is added.
  ASSERT_TRUE(engines[1]->Publish("hatchet.same.t", "again"));
  for (auto& e : engines) ASSERT_EQ(e->Next(), "again");
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        round();
        return Sum(ledger, "team/a").traffic.msgs_out >= 32;
      },
      kDeadline));
  const logic::ServerUsage a = Sum(ledger, "team/a");
  EXPECT_EQ(a.traffic.msgs_in, 11);
  EXPECT_EQ(a.traffic.msgs_out, 32);
}

}  // namespace
}  // namespace switchboard::operator_controller
