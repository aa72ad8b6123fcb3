// AuthCallout with isolation: Accounts (NATS operator mode) on real servers:
// three routed nats-server-callout (2.15, tools cache) on the config
// RenderOperatorModeConfig writes, each with its own full resolver store.
// The test plays the operator (pushes and deletes installation accounts on
// $SYS.REQ.CLAIMS.* as the system account's user, a JWT over nats.c) and
// the authorizer (a responder in the auth account that answers each
// username/password CONNECT through the authorizer's AnswerRequest with
// OperatorModeSigner: a user JWT for the installation's account, signed by
// the one installation signing key). Every token comes from natsauth,
// operator_logic and the authorizer's answer code. A missing tool is a failure, not a skip.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "switchboard/authorizer/answer.h"
#include "switchboard/natsauth/jwt.h"
#include "switchboard/natsauth/nkey.h"
#include "switchboard/natsauth/operator_jwt.h"
#include "switchboard/operator_logic/account_sync.h"
#include "switchboard/operator_logic/operator_mode_claims.h"
#include "switchboard/operator_logic/operator_mode_config.h"
#include "switchboard/testing/callout_responder.h"
#include "switchboard/testing/directory.h"
#include "switchboard/testing/nats_client.h"
#include "switchboard/testing/nats_cluster.h"
#include "switchboard/testing/process.h"
#include "switchboard/testing/tool_path.h"
#include "switchboard/testing/wait.h"

namespace switchboard::operator_logic {
namespace {

using namespace std::chrono_literals;
using natsauth::KeyPair;
using natsauth::KeyType;
using nlohmann::json;
using ::testing::HasSubstr;
using testing::NatsCluster;
using testing::NatsTestClient;

constexpr auto kDeadline = 15s;
constexpr char kMaxConnectionsError[] = "maximum account active connections exceeded";

int64_t Now() { return static_cast<int64_t>(std::time(nullptr)); }

KeyPair Key(KeyType type) { return KeyPair::Generate(type).value(); }

// A client authenticating with a user JWT and the key that signs nonces.
NatsTestClient::UserJwt Creds(const natsauth::UserClaims& user, const KeyPair& account,
                              const KeyPair& user_key) {
  return {.jwt = natsauth::EncodeUserClaims(user, account).value(),
          .sign = [&user_key](std::string_view nonce) {
            auto sig = user_key.Sign(nonce);
            return sig.ok() ? *sig : std::string();
          }};
}

// One installation the responder knows.
struct Installation {
  std::string password, account, prefix;
};

// The authorizer's part: its own answer code (AnswerRequest) with the
// operator-mode signer, the installation's account from `table`; the
// responder (tests/support) is the auth account's user.
class OperatorModeAnswer {
 public:
  OperatorModeAnswer(const KeyPair& auth, const KeyPair& signing,
                     const std::map<std::string, Installation>& table)
      : auth_(auth), signer_(signing, [this](const AuthorizationDecision& d) {
          auto it = accounts_.find(d.username);
          return it == accounts_.end() ? std::string() : it->second;
        }) {
    directory_.server_ns = "nats";
    directory_.server_name = "main";
    for (const auto& [user, inst] : table) {
      directory_.Add(switchboard::testing::DirectoryUser(user, inst.password, inst.prefix));
      accounts_[user] = inst.account;
    }
  }
  OperatorModeAnswer(const OperatorModeAnswer&) = delete;
  OperatorModeAnswer& operator=(const OperatorModeAnswer&) = delete;

  testing::CalloutResponder::Outcome operator()(std::string_view token) const {
    authorizer::Answer answer = authorizer::AnswerRequest(
        std::string(token), directory_, auth_, signer_, std::chrono::system_clock::now());
    if (answer.result == authorizer::kResultInvalid) return {.error = answer.message};
    return {.reply = std::move(answer.reply)};
  }

 private:
  const KeyPair& auth_;  // signs the responses
  Directory directory_;
  std::map<std::string, std::string> accounts_;  // user -> installation account key
  authorizer::OperatorModeSigner signer_;
};

class OperatorModeNatsTest : public testing::NatsLibraryTest {
 protected:
  void SetUp() override {
    binary_ = switchboard::testing::ToolPath("nats-server-callout");
    ASSERT_EQ(access(binary_.c_str(), X_OK), 0)
        << binary_ << " is missing: build it with `bash scripts/build-tools.sh "
        << "nats-server-callout` (make test does, through make tools)";
    cluster_ = std::make_unique<NatsCluster>(NatsCluster::Options{.binary = binary_});
    keys_ = {.operator_key = op_.public_key(),
             .system_account = sys_.public_key(),
             .auth_account = auth_.public_key(),
             .authorizer_user = authorizer_.public_key(),
             .installation_signing_key = signing_.public_key()};
  }
  void TearDown() override {
    if (responder_) {
      EXPECT_THAT(responder_->Errors(), ::testing::IsEmpty());
    }
    responder_.reset();
    system_.reset();
    cluster_.reset();
  }

  // The rendered config of server i: its own resolver store.
  Result<std::string> Config(int i) {
    const int64_t now = Now();
    OperatorModeConfigInput in;
    in.server_ns = "nats";
    in.server_name = "main";
    in.operator_jwt = natsauth::EncodeOperatorClaims(OperatorClaimsFor(keys_, now), op_).value();
    in.system_account_jwt =
        natsauth::EncodeAccountClaims(SystemAccountClaims(keys_, now), op_).value();
    in.auth_account_jwt = natsauth::EncodeAccountClaims(AuthAccountClaims(keys_, now), op_).value();
    in.sentinel_jwt =
        natsauth::EncodeUserClaims(SentinelClaims(sentinel_.public_key(), now), auth_).value();
    in.resolver_dir = cluster_->dir() + "/resolver-" + cluster_->server_name(i);
    in.now = now;
    return RenderOperatorModeConfig(in);
  }

  void StartCluster() {
    std::vector<std::string> bodies;
    for (int i = 0; i < cluster_->size(); ++i) {
      auto body = Config(i);
      ASSERT_TRUE(body.ok()) << body.status().ToString();
      bodies.push_back(*body);
    }
    ASSERT_TRUE(cluster_->Start(bodies)) << cluster_->error();
    ASSERT_NO_FATAL_FAILURE(ConnectSystem());
  }

  void StartResponder(std::map<std::string, Installation> table) {
    natsauth::UserClaims user;
    user.claims = {
        .issued_at = Now(), .name = "switchboard-authorizer", .subject = authorizer_.public_key()};
    responder_.reset();
    answer_ = std::make_unique<OperatorModeAnswer>(auth_, signing_, table);
    responder_ = std::make_unique<testing::CalloutResponder>(
        std::make_unique<NatsTestClient>(cluster_->url(1), Creds(user, auth_, authorizer_)),
        [answer = answer_.get()](std::string_view token) { return (*answer)(token); });
    ASSERT_TRUE(responder_->ok()) << responder_->error() << "\n" << cluster_->Log(1);
  }

  // Pushes an installation's account; the reply of the first server.
  void Push(const std::string& account, const std::string& name, api::InstallationLimits limits) {
    auto claims = InstallationAccountClaims({"team", name, account, limits}, keys_, Now());
    ASSERT_TRUE(claims.ok()) << claims.status().ToString();
    std::string jwt = natsauth::EncodeAccountClaims(*claims, op_).value();
    json reply = json::parse(system_->Request("$SYS.REQ.CLAIMS.UPDATE", jwt), nullptr, false);
    ASSERT_TRUE(reply.is_object()) << "no reply to CLAIMS.UPDATE";
    EXPECT_EQ(reply["data"].value("code", 0), 200) << reply;
    EXPECT_EQ(reply["data"].value("account", ""), account) << reply;
  }

  // $SYS.REQ.CLAIMS.LIST of every server, by server name.
  std::map<std::string, std::set<std::string>> Listed() {
    std::map<std::string, std::set<std::string>> out;
    for (const auto& text : system_->RequestMany("$SYS.REQ.CLAIMS.LIST", "", cluster_->size())) {
      json reply = json::parse(text, nullptr, false);
      if (!reply.is_object()) continue;
      auto& keys = out[reply["server"].value("name", "")];
      for (const auto& k : reply.value("data", json::array())) keys.insert(k.get<std::string>());
    }
    return out;
  }
  // True once every server's resolver holds `account` (or no longer does).
  bool EveryServerLists(const std::string& account, bool present) {
    return testing::WaitFor(
        [&] {
          auto listed = Listed();
          if (static_cast<int>(listed.size()) != cluster_->size()) return false;
          for (const auto& [server, keys] : listed) {
            if ((keys.count(account) > 0) != present) return false;
          }
          return true;
        },
        kDeadline, 50ms);
  }

  // The account server i reports for a client user.
  std::string AccountOf(int i, const std::string& user) {
    json connz = cluster_->Monitor(i, "connz?auth=true");
    for (const auto& c : connz.value("connections", json::array())) {
      if (c.value("authorized_user", "") == user) return c.value("account", "");
    }
    return "";
  }

  void ConnectSystem() {
    natsauth::UserClaims sys_user;
    sys_user.claims = {
        .issued_at = Now(), .name = "switchboard-system", .subject = sys_user_.public_key()};
    system_ = std::make_unique<NatsTestClient>(cluster_->url(0), Creds(sys_user, sys_, sys_user_),
                                               kDeadline);
    ASSERT_TRUE(system_->connected()) << system_->error() << "\n" << cluster_->Log(0);
  }

  // What the resolver holds, as PlanAccountSync reads it: a key every
  // server lists, with its JWT when `look_up` names it.
  std::map<std::string, std::optional<std::string>> Stored(const std::set<std::string>& look_up) {
    std::map<std::string, int> count;
    for (const auto& [server, keys] : Listed()) {
      for (const auto& k : keys) ++count[k];
    }
    std::map<std::string, std::optional<std::string>> stored;
    for (const auto& [key, n] : count) {
      if (n != cluster_->size()) continue;
      if (look_up.count(key) == 0) {
        stored[key] = std::nullopt;
      } else {
        stored[key] = system_->Request("$SYS.REQ.ACCOUNT." + key + ".CLAIMS.LOOKUP", "");
      }
    }
    return stored;
  }

  // One level-based pass as the operator will run it: plan from the
  // listing, look up what the plan asks for, plan again, push and delete.
  // Returns the plan that was carried out.
  AccountSyncPlan SyncOnce(const std::map<std::string, natsauth::AccountClaims>& desired) {
    AccountSyncInput in;
    in.desired = desired;
    in.keep = {keys_.system_account, keys_.auth_account};
    in.operator_key = op_.public_key();
    in.now = Now();
    in.stored = Stored({});
    AccountSyncPlan plan = PlanAccountSync(in);
    if (!plan.look_up.empty()) {
      in.stored = Stored({plan.look_up.begin(), plan.look_up.end()});
      plan = PlanAccountSync(in);
    }
    for (const auto& p : plan.push) {
      std::string jwt = natsauth::EncodeAccountClaims(desired.at(p.account), op_).value();
      json reply = json::parse(system_->Request("$SYS.REQ.CLAIMS.UPDATE", jwt), nullptr, false);
      EXPECT_TRUE(reply.is_object() && reply["data"].value("code", 0) == 200) << reply;
    }
    if (!plan.remove.empty()) {
      std::string del = natsauth::EncodeAccountDeleteRequest(plan.remove, op_, Now()).value();
      json reply = json::parse(system_->Request("$SYS.REQ.CLAIMS.DELETE", del), nullptr, false);
      EXPECT_TRUE(reply.is_object() && reply["data"].value("code", 0) == 200) << reply;
    }
    return plan;
  }
  // Passes until one finds nothing to do (the servers share a push
  // asynchronously, so a pass may see a server that has not stored it yet).
  bool Converge(const std::map<std::string, natsauth::AccountClaims>& desired) {
    return testing::WaitFor([&] { return SyncOnce(desired).empty(); }, kDeadline, 50ms);
  }

  std::string binary_;
  std::unique_ptr<NatsCluster> cluster_;
  KeyPair op_ = Key(KeyType::kOperator), sys_ = Key(KeyType::kAccount),
          auth_ = Key(KeyType::kAccount), signing_ = Key(KeyType::kAccount),
          authorizer_ = Key(KeyType::kUser), sys_user_ = Key(KeyType::kUser),
          sentinel_ = Key(KeyType::kUser);
  OperatorModeKeys keys_;
  std::unique_ptr<NatsTestClient> system_;
  std::unique_ptr<OperatorModeAnswer> answer_;  // outlives responder_
  std::unique_ptr<testing::CalloutResponder> responder_;
};

TEST_F(OperatorModeNatsTest, RenderedConfigPassesServerCheck) {
  auto body = Config(0);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  std::string path = cluster_->dir() + "/check.conf";
  std::ofstream(cluster_->dir() + "/body.conf") << *body;
  std::ofstream(path) << "listen: \"127.0.0.1:4222\"\ninclude \"body.conf\"\n";
  testing::RunResult r = testing::Run({binary_, "-t", "-c", path});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // And refuses it with a user configured beside the operator: the check
  // can fail.
  std::ofstream(path, std::ios::app) << "authorization { users: [{user: x, password: y}] }\n";
  r = testing::Run({binary_, "-t", "-c", path});
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
}

TEST_F(OperatorModeNatsTest, AccountsPushedLiveAndCalloutPlacesUsersInThem) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  const std::string a = Key(KeyType::kAccount).public_key();
  const std::string b = Key(KeyType::kAccount).public_key();
  std::optional<std::string> loaded = cluster_->ConfigLoadTime(2);
  ASSERT_NO_FATAL_FAILURE(Push(a, "inst-a", {.max_connections = 2}));
  ASSERT_NO_FATAL_FAILURE(Push(b, "inst-b", {}));
  // The full resolvers share them: every server holds both.
  EXPECT_TRUE(EveryServerLists(a, true)) << ::testing::PrintToString(Listed());
  EXPECT_TRUE(EveryServerLists(b, true)) << ::testing::PrintToString(Listed());

  // Both installations on the same subject prefix: only the accounts wall
  // them off.
  ASSERT_NO_FATAL_FAILURE(StartResponder({
      {"inst-a", {.password = "pw-a", .account = a, .prefix = "hatchet.same"}},
      {"inst-b", {.password = "pw-b", .account = b, .prefix = "hatchet.same"}},
  }));

  // A username/password client goes through default_sentinel to the
  // callout and lands in its installation's account, on any server.
  NatsTestClient a1(cluster_->url(2), "inst-a", "pw-a");
  ASSERT_TRUE(a1.connected()) << a1.error() << "\n" << cluster_->Log(2);
  EXPECT_EQ(AccountOf(2, "inst-a#0"), a);
  ASSERT_TRUE(a1.Subscribe("hatchet.same.*"));
  ASSERT_TRUE(a1.Publish("hatchet.same.x", "own"));
  EXPECT_EQ(a1.Next(), "own");
  NatsTestClient wrong(cluster_->url(2), "inst-a", "not-pw-a");
  EXPECT_FALSE(wrong.connected());
  EXPECT_THAT(wrong.error(), HasSubstr("Authorization Violation"));

  // A second connection of A is its limit; the third is refused with the
  // server's error while B still connects.
  NatsTestClient a2(cluster_->url(2), "inst-a", "pw-a");
  ASSERT_TRUE(a2.connected()) << a2.error();
  NatsTestClient a3(cluster_->url(2), "inst-a", "pw-a");
  EXPECT_FALSE(a3.connected());
  EXPECT_THAT(a3.error(), HasSubstr(kMaxConnectionsError));
  // The count is the account's across the cluster: another server refuses
  // too once A's connection count has reached it (an event over the routes;
  // a connection let in before that is closed again at once).
  std::string elsewhere;
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        NatsTestClient other(cluster_->url(0), "inst-a", "pw-a");
        elsewhere = other.error();
        return !other.connected() && elsewhere.find(kMaxConnectionsError) != std::string::npos;
      },
      kDeadline, 50ms))
      << elsewhere;
  NatsTestClient b1(cluster_->url(2), "inst-b", "pw-b");
  ASSERT_TRUE(b1.connected()) << b1.error();
  EXPECT_EQ(AccountOf(2, "inst-b#0"), b);

  // Same prefix, another account: B's message never reaches A (A's own
  // later message arrives first).
  ASSERT_TRUE(b1.Publish("hatchet.same.x", "from-b"));
  ASSERT_TRUE(a2.Publish("hatchet.same.y", "from-a"));
  EXPECT_EQ(a1.Next(), "from-a");

  // No reload anywhere: the accounts came through the resolver.
  EXPECT_EQ(cluster_->ConfigLoadTime(2), loaded);

  // Deleting A closes its connections and removes it from every store.
  std::string del = natsauth::EncodeAccountDeleteRequest({a}, op_, Now()).value();
  json reply = json::parse(system_->Request("$SYS.REQ.CLAIMS.DELETE", del), nullptr, false);
  ASSERT_TRUE(reply.is_object()) << "no reply to CLAIMS.DELETE";
  EXPECT_EQ(reply["data"].value("code", 0), 200) << reply;
  EXPECT_TRUE(a1.WaitClosed());
  EXPECT_TRUE(a2.WaitClosed());
  EXPECT_TRUE(EveryServerLists(a, false)) << ::testing::PrintToString(Listed());
  // B is untouched.
  EXPECT_TRUE(EveryServerLists(b, true));
  ASSERT_TRUE(b1.Subscribe("hatchet.same.*"));
  ASSERT_TRUE(b1.Publish("hatchet.same.z", "still"));
  EXPECT_EQ(b1.Next(), "still");
}

// PlanAccountSync against the real resolver: level-based passes push what
// is missing, re-push a changed limit (which applies to live connections),
// push everything again after a whole-cluster restart with emptied stores
// (no memory of earlier pushes), and delete a gone installation's account.
TEST_F(OperatorModeNatsTest, SyncPlanKeepsTheResolverInStep) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  const std::string a = Key(KeyType::kAccount).public_key();
  const std::string b = Key(KeyType::kAccount).public_key();
  auto claims = [&](const std::string& key, const std::string& name,
                    api::InstallationLimits limits) {
    return InstallationAccountClaims({"team", name, key, limits}, keys_, Now()).value();
  };
  std::map<std::string, natsauth::AccountClaims> desired = {
      {a, claims(a, "inst-a", {.max_connections = 2})}, {b, claims(b, "inst-b", {})}};

  // An empty resolver: both are missing and pushed in one pass.
  AccountSyncPlan first = SyncOnce(desired);
  EXPECT_EQ(first.push, (std::vector<AccountPush>{{std::min(a, b), AccountPushReason::kMissing},
                                                  {std::max(a, b), AccountPushReason::kMissing}}));
  ASSERT_TRUE(Converge(desired));
  EXPECT_TRUE(EveryServerLists(a, true));

  // Two connections of A; its limit lowered to 1: a pass finds A stale and
  // pushes it, and the server closes a connection over the new limit.
  ASSERT_NO_FATAL_FAILURE(StartResponder({
      {"inst-a", {.password = "pw-a", .account = a, .prefix = "hatchet.a"}},
      {"inst-b", {.password = "pw-b", .account = b, .prefix = "hatchet.b"}},
  }));
  auto a1 = std::make_unique<NatsTestClient>(cluster_->url(1), "inst-a", "pw-a");
  ASSERT_TRUE(a1->connected()) << a1->error();
  auto a2 = std::make_unique<NatsTestClient>(cluster_->url(1), "inst-a", "pw-a");
  ASSERT_TRUE(a2->connected()) << a2->error();
  desired[a] = claims(a, "inst-a", {.max_connections = 1});
  AccountSyncPlan lowered = SyncOnce(desired);
  EXPECT_EQ(lowered.push, (std::vector<AccountPush>{{a, AccountPushReason::kStale}}));
  EXPECT_TRUE(testing::WaitFor(
      [&] { return cluster_->Monitor(1, "connz?acc=" + a).value("num_connections", -1) == 1; },
      kDeadline))
      << "A still has more connections than its lowered limit";
  ASSERT_TRUE(Converge(desired));
  a1.reset();
  a2.reset();
  responder_.reset();

  // Every server stopped, every store emptied, every server started: the
  // accounts are gone until a pass pushes them again.
  system_.reset();
  for (int i = 0; i < cluster_->size(); ++i) cluster_->StopServer(i);
  for (int i = 0; i < cluster_->size(); ++i) {
    std::filesystem::remove_all(cluster_->dir() + "/resolver-" + cluster_->server_name(i));
  }
  for (int i = 0; i < cluster_->size(); ++i) {
    ASSERT_TRUE(cluster_->StartServer(i)) << cluster_->error();
  }
  ASSERT_NO_FATAL_FAILURE(ConnectSystem());
  EXPECT_TRUE(EveryServerLists(a, false));
  AccountSyncPlan after = SyncOnce(desired);
  EXPECT_EQ(after.push.size(), 2u);
  for (const auto& p : after.push) EXPECT_EQ(p.reason, AccountPushReason::kMissing);
  ASSERT_TRUE(Converge(desired));
  EXPECT_TRUE(EveryServerLists(a, true));
  EXPECT_TRUE(EveryServerLists(b, true));

  // An installation gone: a pass deletes its account; the fixed ones stay.
  desired.erase(b);
  AccountSyncPlan removed = SyncOnce(desired);
  EXPECT_EQ(removed.remove, std::vector<std::string>{b});
  EXPECT_TRUE(EveryServerLists(b, false));
  EXPECT_TRUE(EveryServerLists(keys_.system_account, true));
  EXPECT_TRUE(EveryServerLists(keys_.auth_account, true));
}

}  // namespace
}  // namespace switchboard::operator_logic
