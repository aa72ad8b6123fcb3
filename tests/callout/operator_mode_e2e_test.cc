// AuthCallout with isolation: Accounts (NATS operator mode) as a whole
// system: three routed nats-server-callout on the static config the
// operator wrote (each server its own resolver store), the operator, two
// switchboard-authorizer replicas, and engine-like connections
// (`switchboard pubsub sub` with an installation's env Secret).
//
// One test, in order: two backends become Ready, each engine lands in an
// account of its own (not the auth account, not the other's), the one its
// backend's status.account names; `kubectl get natssrv` shows Accounts; a backend at
// its maxConnections gets the server's refusal while the other installation
// connects; raising the limit applies with no reload (config_load_time
// never moves); deleting a backend closes its connection and removes its
// account from every resolver store; every server stopped, its store
// emptied and started again (three times): the accounts come back and
// every engine reconnects into its own by itself, never giving up; a
// rotation acknowledged: the engines on the retired password are closed
// by the authorizers' sweep.
//
// Everything is real: kube-apiserver + etcd (fixture "cluster"), the
// binaries of this build. Waits are conditions with deadlines.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "switchboard/kube/client.h"
#include "switchboard/kube/config.h"
#include "switchboard/testing/e2e_harness.h"
#include "switchboard/testing/nats_cluster.h"
#include "switchboard/testing/process.h"
#include "switchboard/testing/temp_dir.h"
#include "switchboard/testing/tool_path.h"
#include "switchboard/testing/wait.h"

namespace switchboard::e2e {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

constexpr char kServer[] = "accounts";
constexpr char kMaxConnectionsError[] = "maximum account active connections exceeded";
constexpr int kRestarts = 3;

std::string Tail(const std::string& s, size_t n = 6000) {
  return s.size() > n ? s.substr(s.size() - n) : s;
}

// `switchboard pubsub sub` with an installation's env: an engine's
// connection, reconnecting forever, until the test stops it.
class Engine {
 public:
  Engine(const std::string& log, const std::map<std::string, std::string>& env) : log_(log) {
    testing::Process::Options o;
    o.argv = {BinDir() + "/switchboard", "pubsub", "sub", "--topic", "engine"};
    o.env = env;
    o.log_path = log_;
    proc_ = testing::Process(o);
  }
  ~Engine() { proc_.Stop(); }
  bool Subscribed() const {
    return testing::ReadFile(log_).find("subscribed to") != std::string::npos;
  }
  std::string Log() const { return testing::ReadFile(log_); }

 private:
  std::string log_;
  testing::Process proc_;
};

class OperatorModeE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(Kubeconfig().empty()) << "run through ctest (fixture cluster)";
    const std::string tool = switchboard::testing::ToolPath("nats-server-callout");
    ASSERT_EQ(access(tool.c_str(), X_OK), 0) << tool << " is missing (make tools)";
    ASSERT_EQ(access((BinDir() + "/switchboard-authorizer").c_str(), X_OK), 0)
        << "build switchboard-authorizer first";
    auto cfg = kube::Config::FromKubeconfig(Kubeconfig());
    ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
    auto c = kube::Client::New(*cfg);
    ASSERT_TRUE(c.ok());
    client = std::move(c).value();
    ns = UniqueName("opmode");
    CreateNamespace(ns);
    cluster = std::make_unique<testing::NatsCluster>(
        testing::NatsCluster::Options{.size = 3, .binary = tool});
  }

  void TearDown() override {
    if (HasFailure()) {
      if (op) std::cerr << "operator log (tail):\n" << Tail(op->Log()) << "\n";
      for (auto& e : engines) {
        if (e) std::cerr << "engine log (tail):\n" << Tail(e->Log(), 2000) << "\n";
      }
      for (auto& a : authorizers) {
        if (a) std::cerr << "authorizer log (tail):\n" << Tail(a->Log(), 3000) << "\n";
      }
      for (int i = 0; cluster && i < cluster->size(); i++) {
        std::cerr << cluster->server_name(i) << " log (tail):\n"
                  << Tail(cluster->Log(i), 2000) << "\n";
      }
    }
    engines.clear();
    if (!ns.empty()) DeleteNamespace(ns);
    authorizers.clear();
    op.reset();
    cluster.reset();
  }

  // The resolver store the NatsServer names; each server gets its own
  // directory beside it (one config body, three local processes).
  std::string ResolverDir() const { return cluster->dir() + "/resolver"; }
  std::string StoreOf(int i) const { return ResolverDir() + "-" + std::to_string(i); }

  std::string ServerYaml() const {
    return "apiVersion: pubsub.switchboard.dev/v1alpha1\nkind: NatsServer\nmetadata: {name: " +
           std::string(kServer) + ", namespace: \"" + ns + "\"}\nspec:\n  url: \"" +
           cluster->urls() +
           "\"\n  isolation: Accounts\n  provisioning:\n    mode: AuthCallout\n"
           "    authCallout: {resolverDir: \"" +
           ResolverDir() + "\"}\n";
  }
  std::vector<std::string> Bodies(const std::string& body) const {
    const std::string quoted = "\"" + ResolverDir() + "\"";
    std::vector<std::string> out;
    for (int i = 0; i < cluster->size(); i++) {
      std::string b = body;
      auto at = b.find(quoted);
      if (at != std::string::npos) b.replace(at, quoted.size(), "\"" + StoreOf(i) + "\"");
      out.push_back(std::move(b));
    }
    return out;
  }

  void CreateBackend(const std::string& name, std::optional<int> max_connections) {
    json nats = {{"serverRef", {{"name", kServer}}}, {"subjectPrefix", "hatchet." + name}};
    if (max_connections) nats["limits"] = {{"maxConnections", *max_connections}};
    json b = {{"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
              {"kind", "PubSubBackend"},
              {"metadata", {{"name", name}, {"namespace", ns}}},
              {"spec", {{"kind", "nats"}, {"nats", nats}}}};
    auto r = client->Create(kube::resources::PubSubBackend(), b);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  std::map<std::string, std::string> Env(const std::string& backend, int server) {
    auto env = SecretData(ns, backend + "-pubsub-env");
    env["SERVER_MSGQUEUE_PUBSUB_NATS_URL"] = cluster->url(server);
    return env;
  }
  std::string User(const std::string& backend) {
    return SecretData(ns, backend + "-pubsub-env")["SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME"];
  }
  json Server() { return Get("natsserver", ns, kServer); }

  // The accounts of `user`'s client connections on every running server.
  std::multiset<std::string> AccountsOf(const std::string& user) {
    std::multiset<std::string> out;
    for (int i = 0; i < cluster->size(); i++) {
      if (!cluster->running(i)) continue;
      json connz = cluster->Monitor(i, "connz?auth=true&limit=10000");
      for (const auto& c : connz.value("connections", json::array())) {
        std::string u = c.value("authorized_user", "");
        if (u.substr(0, u.find('#')) == user) out.insert(c.value("account", ""));
      }
    }
    return out;
  }
  // Whether every server's resolver store holds `account`'s JWT.
  bool EveryStoreHolds(const std::string& account) {
    for (int i = 0; i < cluster->size(); i++) {
      if (!fs::exists(StoreOf(i) + "/" + account + ".jwt")) return false;
    }
    return true;
  }
  bool NoStoreHolds(const std::string& account) {
    for (int i = 0; i < cluster->size(); i++) {
      if (fs::exists(StoreOf(i) + "/" + account + ".jwt")) return false;
    }
    return true;
  }
  std::vector<std::optional<std::string>> LoadTimes() {
    std::vector<std::optional<std::string>> t;
    for (int i = 0; i < cluster->size(); i++) t.push_back(cluster->ConfigLoadTime(i));
    return t;
  }
  testing::RunResult Publish(const std::map<std::string, std::string>& env) {
    return testing::Run({BinDir() + "/switchboard", "pubsub", "pub", "--topic", "probe", "{}"}, env,
                        "", 60s);
  }
  std::unique_ptr<Engine> StartEngine(const std::string& backend, int server) {
    return std::make_unique<Engine>(
        engine_dir.path() + "/engine-" + backend + "-" + std::to_string(engines_started++) + ".log",
        Env(backend, server));
  }

  std::unique_ptr<kube::Client> client;
  std::string ns;
  std::unique_ptr<testing::NatsCluster> cluster;
  std::unique_ptr<OperatorProcess> op;
  std::vector<std::unique_ptr<AuthorizerProcess>> authorizers;
  std::vector<std::unique_ptr<Engine>> engines;
  int engines_started = 0;  // names each engine's log
  testing::TempDir engine_dir;
};

TEST_F(OperatorModeE2E, AccountPerInstallationLimitsDeleteAndWholeClusterRestart) {
  // Probes only on changes: a probe is a connection of the installation's
  // account too, and would take "capped"'s one slot now and then.
  op = std::make_unique<OperatorProcess>(std::vector<std::string>{ns},
                                         std::vector<std::string>{"--probe-interval", "5m"});
  Apply(ServerYaml());
  std::string body;
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        body = SecretData(ns, std::string(kServer) + "-switchboard")["switchboard.conf"];
        return body.find("default_sentinel") != std::string::npos;
      },
      60s, 200ms))
      << "no operator-mode config written: " << Server().dump(2);
  // The static config holds no seed (the callout Secret does).
  for (const auto& [key, value] : SecretData(ns, std::string(kServer) + "-auth-callout")) {
    if (key.find("seed") != std::string::npos) {
      EXPECT_EQ(body.find(value), std::string::npos);
    }
  }
  ASSERT_TRUE(cluster->Start(Bodies(body))) << cluster->error();
  for (int i = 0; i < 2; i++) {
    authorizers.push_back(std::make_unique<AuthorizerProcess>(std::vector<std::string>{ns},
                                                              ns + "/" + std::string(kServer)));
  }
  for (auto& a : authorizers) {
    ASSERT_TRUE(testing::WaitFor([&] { return a->Ready(); }, 60s, 100ms)) << Tail(a->Log());
  }
  const std::string auth_account = Server()["status"]["authCallout"].value("issuer", "");
  ASSERT_FALSE(auth_account.empty()) << Server().dump(2);

  // Two installations, each Ready in an account of its own.
  CreateBackend("free", std::nullopt);
  CreateBackend("capped", 1);
  ASSERT_TRUE(WaitReady(ns, "free", "True", "", 60)) << Get("psb", ns, "free").dump(2);
  ASSERT_TRUE(WaitReady(ns, "capped", "True", "", 60)) << Get("psb", ns, "capped").dump(2);
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        json s = Server()["status"];
        return s["operatorMode"].value("accounts", 0) == 2 &&
               s["operatorMode"].value("servers", 0) == 3;
      },
      30s, 200ms))
      << Server()["status"].dump(2);
  const auto load_times = LoadTimes();
  for (const auto& t : load_times) ASSERT_TRUE(t.has_value());

  engines.push_back(StartEngine("free", 0));
  engines.push_back(StartEngine("capped", 1));
  for (auto& e : engines) {
    ASSERT_TRUE(testing::WaitFor([&] { return e->Subscribed(); }, 30s)) << e->Log();
  }
  std::string free_account, capped_account;
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        auto f = AccountsOf(User("free"));
        auto c = AccountsOf(User("capped"));
        if (f.size() != 1 || c.size() != 1) return false;
        free_account = *f.begin();
        capped_account = *c.begin();
        return true;
      },
      30s, 200ms));
  EXPECT_EQ(free_account.size(), 56u) << free_account;
  EXPECT_EQ(free_account[0], 'A') << free_account;
  EXPECT_NE(free_account, capped_account);
  EXPECT_NE(free_account, auth_account);
  EXPECT_NE(capped_account, auth_account);
  EXPECT_TRUE(testing::WaitFor([&] { return EveryStoreHolds(free_account); }, 30s, 200ms));
  EXPECT_TRUE(EveryStoreHolds(capped_account));
  // Each backend's status.account is the account its engine landed in.
  for (const auto& [backend, account] :
       {std::pair{"free", free_account}, std::pair{"capped", capped_account}}) {
    EXPECT_TRUE(testing::WaitFor(
        [&] { return Get("psb", ns, backend)["status"].value("account", "") == account; }, 30s,
        200ms))
        << Get("psb", ns, backend)["status"].dump(2);
  }
  // kubectl get natssrv shows the isolation.
  {
    auto got = Kubectl({"get", "natssrv", "-n", ns, kServer});
    EXPECT_EQ(got.exit_code, 0) << got.err;
    EXPECT_NE(got.out.find("ISOLATION"), std::string::npos) << got.out;
    EXPECT_NE(got.out.find("Accounts"), std::string::npos) << got.out;
  }

  // "capped" holds its one connection (the engine): a second is refused
  // with the server's error, while "free" still connects.
  {
    auto r = Publish(Env("capped", 2));
    EXPECT_NE(r.exit_code, 0) << r.out;
    EXPECT_NE((r.err + r.out).find(kMaxConnectionsError), std::string::npos) << r.err << r.out;
    auto ok = Publish(Env("free", 2));
    EXPECT_EQ(ok.exit_code, 0) << ok.err;
  }

  // Raised to 2: applies to live servers with no reload.
  auto patched =
      client->Patch(kube::resources::PubSubBackend(), ns, "capped", kube::PatchType::kMerge,
                    json{{"spec", {{"nats", {{"limits", {{"maxConnections", 2}}}}}}}});
  ASSERT_TRUE(patched.ok()) << patched.status().ToString();
  EXPECT_TRUE(
      testing::WaitFor([&] { return Publish(Env("capped", 2)).exit_code == 0; }, 30s, 500ms))
      << Publish(Env("capped", 2)).err;
  EXPECT_EQ(LoadTimes(), load_times) << "no server reloaded";

  // Every server stopped, its store emptied, started again, kRestarts
  // times, the engines left alone: each reconnects by itself into its
  // account. A server that lacks the account a callout answer names asks
  // the system account for it, and the operator's answer (AccountLookups,
  // from the desired accounts) gives it, so no engine waits for the
  // operator's next comparison; that comparison still fills every store.
  // nats.c (like Hatchet's nats.go) closes a connection for good after the
  // same authorization error twice from one server: an engine that gave up
  // fails the test.
  // Two more engines of "free", so every server has one to refuse.
  engines.push_back(StartEngine("free", 1));
  engines.push_back(StartEngine("free", 2));
  for (auto& e : engines) {
    ASSERT_TRUE(testing::WaitFor([&] { return e->Subscribed(); }, 30s)) << e->Log();
  }
  const std::vector<std::string> engine_backends = {"free", "capped", "free", "free"};
  const std::map<std::string, std::multiset<std::string>> wanted = {
      {"free", {free_account, free_account, free_account}}, {"capped", {capped_account}}};
  for (int round = 0; round < kRestarts; round++) {
    SCOPED_TRACE("whole-cluster restart " + std::to_string(round + 1));
    for (int i = 0; i < cluster->size(); i++) cluster->StopServer(i);
    for (int i = 0; i < cluster->size(); i++) fs::remove_all(StoreOf(i));
    for (int i = 0; i < cluster->size(); i++) {
      ASSERT_TRUE(cluster->StartServer(i)) << cluster->error();
    }
    EXPECT_TRUE(testing::WaitFor(
        [&] {
          for (const auto& [backend, accounts] : wanted) {
            if (AccountsOf(User(backend)) != accounts) return false;
          }
          return true;
        },
        60s, 200ms))
        << "engines not back in their accounts";
    for (size_t i = 0; i < engines.size(); i++) {
      EXPECT_EQ(engines[i]->Log().find("NATS connection closed"), std::string::npos)
          << engine_backends[i] << "'s engine " << i << " gave up:\n"
          << Tail(engines[i]->Log(), 3000);
    }
    EXPECT_TRUE(testing::WaitFor(
        [&] { return EveryStoreHolds(free_account) && EveryStoreHolds(capped_account); }, 60s,
        200ms));
    // The servers' own words for a lookup that found nothing (each log
    // starts with this run of the server).
    int not_found = 0;
    for (int i = 0; i < cluster->size(); i++) {
      const std::string log = cluster->Log(i);
      for (size_t at = log.find("Account fetch failed"); at != std::string::npos;
           at = log.find("Account fetch failed", at + 1)) {
        ++not_found;
      }
    }
    std::cout << "whole-cluster restart " << round + 1 << ": engines back; account lookups "
              << "that found nothing: " << not_found << "\n";
    if (HasFailure()) break;
  }

  // A rotation of "free": the old password keeps working until the
  // rotation is acknowledged; then it is refused, and the authorizers'
  // sweep (CONNZ across the installations' accounts) closes the engines
  // still on it. They restart with the new env Secret, as a rollout would.
  {
    const auto before = SecretData(ns, "free-pubsub-env");
    const std::string user = User("free");
    auto r =
        Kubectl({"annotate", "psb", "-n", ns, "free", "pubsub.switchboard.dev/rotate-password=t1"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_TRUE(testing::WaitFor(
        [&] {
          return SecretData(ns, "free-pubsub-env")["SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD"] !=
                 before.at("SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD");
        },
        30s, 200ms))
        << Get("psb", ns, "free").dump(2);
    EXPECT_EQ(User("free"), user) << "a rotation keeps the name";
    EXPECT_EQ(Publish(Env("free", 0)).exit_code, 0) << "the new password";
    EXPECT_EQ(AccountsOf(user).size(), 3u) << "the engines are not cut off by the rotation";
    r = Kubectl(
        {"annotate", "psb", "-n", ns, "free", "pubsub.switchboard.dev/rotation-acknowledged=t1"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(testing::WaitFor([&] { return AccountsOf(user).empty(); }, 60s, 200ms))
        << "the engines on the retired password are still connected";
    for (size_t i = 0; i < engines.size(); i++) {
      if (engine_backends[i] == "free") engines[i] = StartEngine("free", static_cast<int>(i % 3));
    }
    EXPECT_TRUE(testing::WaitFor([&] { return AccountsOf(user) == wanted.at("free"); }, 60s, 200ms))
        << "the engines on the new password are not back";
  }

  // Deleted: its connection closes and its account leaves every store.
  const std::string capped_user = User("capped");
  auto del = client->Delete(kube::resources::PubSubBackend(), ns, "capped");
  ASSERT_TRUE(del.ok()) << del.status().ToString();
  EXPECT_TRUE(testing::WaitFor([&] { return AccountsOf(capped_user).empty(); }, 60s, 200ms));
  EXPECT_TRUE(testing::WaitFor([&] { return NoStoreHolds(capped_account); }, 60s, 200ms));
  EXPECT_TRUE(EveryStoreHolds(free_account));
  EXPECT_EQ(Publish(Env("free", 1)).exit_code, 0);
}

}  // namespace
}  // namespace switchboard::e2e
