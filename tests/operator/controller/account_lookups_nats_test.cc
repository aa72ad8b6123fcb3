// AccountLookups, the operator's answering connection in NATS operator
// mode, against three routed nats-server-callout (operator_mode_nats.h):
// once every server is stopped, its store emptied and started again (a
// whole-cluster restart on emptyDir stores), every account it answers for
// is in a store again with no client asking (it pushes them after its
// reconnect), so a server that lacks one gets it from that peer at the
// first lookup instead of the peers' empty replies. Accounts are pushed
// only after a reconnect, never by the first Answer.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "account_lookups.h"
#include "operator_mode_nats.h"
#include "switchboard/natsauth/operator_jwt.h"
#include "switchboard/operator_logic/operator_mode_claims.h"
#include "switchboard/operator_logic/retry_timing.h"
#include "switchboard/pubsub/nats_client.h"
#include "switchboard/testing/nats_client.h"
#include "switchboard/testing/wait.h"

namespace switchboard::operator_controller {
namespace {

namespace logic = ::switchboard::operator_logic;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;

constexpr auto kDeadline = 20s;
constexpr auto kWindow = 500ms;  // every server's CLAIMS.LIST reply within it

class AccountLookupsNatsTest : public testing::NatsLibraryTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartOperatorModeNats(nats_));
    pubsub::NatsOptions reader = nats_.system_options;
    reader.name = "test-store-reader";
    reader.reconnect_wait = 250ms;
    auto client = pubsub::NatsClient::Connect(reader);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    reader_ = std::move(client).value();
  }

  void TearDown() override {
    reader_.reset();
    nats_.cluster.reset();
  }

  // Installation ns/name's account as the operator desires it.
  std::pair<std::string, natsauth::AccountClaims> Desired(const std::string& ns,
                                                          const std::string& name) {
    const logic::OperatorModeKeyPairs& keys = nats_.mode->keys;
    auto account = logic::InstallationAccountKey(keys.installation_signing, ns, name);
    EXPECT_TRUE(account.ok());
    auto claims = logic::InstallationAccountClaims({ns, name, account->public_key(), {}},
                                                   keys.Public(), UnixNow());
    EXPECT_TRUE(claims.ok()) << claims.status().ToString();
    return {account->public_key(), *claims};
  }

  // How many servers' stores list `account` (of those that answered).
  int Holding(const std::string& account) {
    auto lists = reader_->RequestAll("$SYS.REQ.CLAIMS.LIST", "", kWindow);
    if (!lists.ok()) return -1;
    int holding = 0;
    for (const auto& text : *lists) {
      json j = json::parse(text, nullptr, false);
      if (!j.is_object() || !j.contains("data") || !j["data"].is_array()) continue;
      for (const auto& k : j["data"]) holding += k == account;
    }
    return holding;
  }

  OperatorModeNats nats_;
  std::unique_ptr<pubsub::NatsClient> reader_;
};

TEST_F(AccountLookupsNatsTest, AfterAWholeClusterRestartEveryAnsweredAccountIsInAStoreAgain) {
  std::map<std::string, natsauth::AccountClaims> desired;
  desired.insert(Desired("team", "a"));
  desired.insert(Desired("team", "b"));

  pubsub::NatsOptions options = nats_.system_options;
  options.name = "switchboard-operator-lookups";
  options.reconnect_wait = logic::timing::kAccountLookupsReconnect;
  auto lookups = AccountLookups::Start(options, nats_.mode->keys.operator_key.Seed(), "fingerprint",
                                       "nats/main");
  ASSERT_TRUE(lookups.ok()) << lookups.status().ToString();
  ASSERT_TRUE((*lookups)->Answer(desired).ok());
  // The first Answer only fills what is answered (the sync pushes what the
  // stores lack): nobody pushed these yet.
  for (const auto& [account, claims] : desired) {
    EXPECT_EQ(Holding(account), 0) << account;
  }
  EXPECT_EQ((*lookups)->PushesAfterReconnect(), 0u);

  // Every server stopped, its store emptied, started again.
  for (int i = 0; i < nats_.cluster->size(); ++i) nats_.cluster->StopServer(i);
  for (int i = 0; i < nats_.cluster->size(); ++i) fs::remove_all(nats_.StoreOf(i));
  for (int i = 0; i < nats_.cluster->size(); ++i) {
    ASSERT_TRUE(nats_.cluster->StartServer(i)) << nats_.cluster->error();
  }

  // With no client and no lookup: each account is in a store again.
  EXPECT_TRUE(testing::WaitFor([&] { return (*lookups)->PushesAfterReconnect() >= 1; }, kDeadline))
      << "no push after the reconnect";
  for (const auto& [account, claims] : desired) {
    EXPECT_TRUE(testing::WaitFor([&] { return Holding(account) >= 1; }, kDeadline))
        << account << " is in no store after the restart\n"
        << nats_.cluster->Log(0);
  }
  EXPECT_EQ((*lookups)->TakeAnswered(), 0u) << "no server looked anything up";
}

}  // namespace
}  // namespace switchboard::operator_controller
