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
// binaries of this build, on CalloutClusterE2E (tests/support). Waits are
// conditions with deadlines.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "switchboard/testing/callout_cluster.h"
#include "switchboard/testing/wait.h"

namespace switchboard::e2e {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

constexpr char kMaxConnectionsError[] = "maximum account active connections exceeded";
constexpr int kRestarts = 3;

class OperatorModeE2E : public CalloutClusterE2E {};

TEST_F(OperatorModeE2E, AccountPerInstallationLimitsDeleteAndWholeClusterRestart) {
  // Probes only on changes: a probe is a connection of the installation's
  // account too, and would take "capped"'s one slot now and then.
  StartOperator({"--probe-interval", "5m"});
  Apply(ServerYaml({.isolation = "Accounts"}));
  const std::string body = WaitConfigBody(IsOperatorModeConfig, "operator-mode config");
  ASSERT_FALSE(body.empty());
  // The static config holds no seed (the callout Secret does).
  for (const auto& [key, value] : SecretData(ns, std::string(kServer) + "-auth-callout")) {
    if (key.find("seed") != std::string::npos) {
      EXPECT_EQ(body.find(value), std::string::npos);
    }
  }
  ASSERT_NO_FATAL_FAILURE(StartNats(body));
  ASSERT_NO_FATAL_FAILURE(StartAuthorizers(2));
  const std::string auth_account = Server()["status"]["authCallout"].value("issuer", "");
  ASSERT_FALSE(auth_account.empty()) << Server().dump(2);

  // Two installations, each Ready in an account of its own.
  ASSERT_NO_FATAL_FAILURE(CreateBackend("free"));
  ASSERT_NO_FATAL_FAILURE(CreateBackend("capped", {{"maxConnections", 1}}));
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

  StartEngine("free", EnvAt("free", 0));
  StartEngine("capped", EnvAt("capped", 1));
  ASSERT_NO_FATAL_FAILURE(WaitEnginesSubscribed());
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
    auto r = Publish(EnvAt("capped", 2));
    EXPECT_NE(r.exit_code, 0) << r.out;
    EXPECT_NE((r.err + r.out).find(kMaxConnectionsError), std::string::npos) << r.err << r.out;
    auto ok = Publish(EnvAt("free", 2));
    EXPECT_EQ(ok.exit_code, 0) << ok.err;
  }

  // A new installation's env Secret comes only once its account is with
  // the servers (their lookups answered for it, pushed to every store): a
  // first connect with it, as soon as it exists, is let in on every server.
  ASSERT_NO_FATAL_FAILURE(CreateBackend("late"));
  ASSERT_TRUE(testing::WaitFor([&] { return !Env("late").empty(); }, 30s, 10ms));
  for (int server = 0; server < 3; ++server) {
    auto first = Publish(EnvAt("late", server));
    EXPECT_EQ(first.exit_code, 0) << "server " << server << ": " << first.err << first.out;
  }

  // Raised to 2: applies to live servers with no reload.
  auto patched =
      client->Patch(kube::resources::PubSubBackend(), ns, "capped", kube::PatchType::kMerge,
                    json{{"spec", {{"nats", {{"limits", {{"maxConnections", 2}}}}}}}});
  ASSERT_TRUE(patched.ok()) << patched.status().ToString();
  EXPECT_TRUE(
      testing::WaitFor([&] { return Publish(EnvAt("capped", 2)).exit_code == 0; }, 30s, 500ms))
      << Publish(EnvAt("capped", 2)).err;
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
  StartEngine("free", EnvAt("free", 1));
  StartEngine("free", EnvAt("free", 2));
  ASSERT_NO_FATAL_FAILURE(WaitEnginesSubscribed());
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
      EXPECT_FALSE(engines[i]->GaveUp())
          << engines[i]->backend() << "'s engine " << i << " gave up:\n"
          << LogTail(engines[i]->Log(), 3000);
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
    EXPECT_EQ(Publish(EnvAt("free", 0)).exit_code, 0) << "the new password";
    // The publish's own connection may still be listed for a moment.
    EXPECT_TRUE(testing::WaitFor([&] { return AccountsOf(user).size() == 3u; }, 10s, 200ms))
        << AccountsOf(user).size() << " connections: the engines are cut off by the rotation";
    r = Kubectl(
        {"annotate", "psb", "-n", ns, "free", "pubsub.switchboard.dev/rotation-acknowledged=t1"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(testing::WaitFor([&] { return AccountsOf(user).empty(); }, 60s, 200ms))
        << "the engines on the retired password are still connected";
    for (size_t i = 0; i < engines.size(); i++) {
      if (engines[i]->backend() == "free") RestartEngine(i, EnvAt("free", static_cast<int>(i % 3)));
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
  EXPECT_EQ(Publish(EnvAt("free", 1)).exit_code, 0);

  // Created again under the same name: the same derived account comes back
  // into every store, the backend is Ready and its credentials connect (a
  // deleted account's key is not left refusing, docs/auth-callout.md).
  ASSERT_NO_FATAL_FAILURE(CreateBackend("capped", {{"maxConnections", 1}}));
  EXPECT_TRUE(WaitReady(ns, "capped", "True", "", 60)) << Get("psb", ns, "capped").dump(2);
  EXPECT_EQ(Get("psb", ns, "capped")["status"].value("account", ""), capped_account);
  EXPECT_TRUE(testing::WaitFor([&] { return EveryStoreHolds(capped_account); }, 60s, 200ms));
  EXPECT_TRUE(
      testing::WaitFor([&] { return Publish(EnvAt("capped", 2)).exit_code == 0; }, 30s, 500ms))
      << "the recreated installation cannot connect";
}

}  // namespace
}  // namespace switchboard::e2e
