// Switching a NatsServer's isolation in AuthCallout mode, as
// docs/auth-callout.md "Switching isolation" tells, with engines connected
// throughout: three routed nats-server-callout, the operator, two
// authorizers, installations with engine-like connections
// (`switchboard pubsub sub` with the env Secret's variables) on different
// servers. Each switch is a spec change, then a rolling restart of NATS
// onto the static config the operator wrote (nats-server cannot reload
// into or out of operator mode), one server at a time.
//
//   PermissionsToAccountsAndBack  AuthCallout: Permissions -> Accounts ->
//       Permissions.
//   IncludeFileToAccounts         IncludeFile (Permissions) -> AuthCallout
//       with Accounts.
//
// After each switch: every engine reconnected with the credentials it
// already had (the env Secrets never change) and is in the right place
// (its own account with Accounts, the callout account HATCHET with
// Permissions), a message published by an installation reaches its own
// engines, the other installation can reach neither its subjects nor its
// account, and every backend is Ready. What the operator reports between
// the spec change and the end of the roll is checked at each step.
#include <gtest/gtest.h>

#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "switchboard/common/base64.h"
#include "switchboard/testing/callout_cluster.h"
#include "switchboard/testing/wait.h"

namespace switchboard::e2e {
namespace {

using namespace std::chrono_literals;

const std::vector<std::string> kBackends = {"alpha", "beta"};

class SwitchingE2E : public CalloutClusterE2E {
 protected:
  // Two engines per installation, on different servers: messages between
  // them cross a route.
  void StartEngines() {
    for (size_t b = 0; b < kBackends.size(); b++) {
      for (int k = 0; k < 2; k++) {
        StartEngine(kBackends[b], EnvAt(kBackends[b], static_cast<int>(b + k) % 3));
      }
    }
    WaitEnginesSubscribed();
  }

  // Every engine's connection, by backend: the accounts they are in.
  std::map<std::string, std::multiset<std::string>> EngineAccounts() const {
    std::map<std::string, std::multiset<std::string>> out;
    for (const auto& b : kBackends) out[b] = AccountsOf(engine_user.at(b));
    return out;
  }
  // Both engines of each installation connected, in `want(backend)`.
  bool EnginesIn(const std::function<bool(const std::string&, const std::string&)>& want) const {
    for (const auto& [backend, accounts] : EngineAccounts()) {
      if (accounts.size() != 2) return false;
      for (const auto& a : accounts) {
        if (!want(backend, a)) return false;
      }
    }
    return true;
  }
  // Operator mode's account names: public account keys.
  static bool IsAccountKey(const std::string& a) { return a.size() == 56 && a[0] == 'A'; }

  // No engine closed its connection for good.
  void ExpectNoEngineGaveUp(const std::string& when) {
    for (auto& e : engines) {
      EXPECT_FALSE(e->GaveUp()) << e->backend() << "'s engine gave up " << when << ":\n"
                                << LogTail(e->Log(), 2000);
      EXPECT_TRUE(e->running()) << e->backend() << " exited " << when;
    }
  }

  // Each server in turn restarted on `opmode` (the operator-mode config),
  // every engine connected again after each restart and none gave up; asserts.
  // A server just restarted into operator mode may refuse a reconnect
  // until its empty store holds the installation's account (the
  // operator's connection is not back on it yet), but the servers not yet
  // restarted still admit the engine: the authorizers serve each server in
  // the isolation it runs (authorizer/served.h, LoginsOf). nats.c, like
  // nats.go, gives up only after the same refusal twice from one server.
  void RollIntoAccounts(const std::string& opmode, const std::string& step) {
    RollingRestart(opmode, [&](int i) {
      EXPECT_TRUE(testing::WaitFor([&] { return EnginesIn([](auto&, auto&) { return true; }); },
                                   60s, 200ms))
          << "after restarting " << cluster->server_name(i) << ": "
          << json(EngineAccounts()).dump();
      ExpectNoEngineGaveUp("after restarting " + cluster->server_name(i));
      Report(step + ": " + cluster->server_name(i) + " restarted");
    });
  }

  // After a roll into Accounts: each installation's two engines in one
  // account key, the two installations' keys apart, and none gave up
  // since. Waited for, not read once: one run read both installations'
  // engines in the same key right after the roll, while engines refused in
  // it were reconnecting.
  void ExpectEnginesInOwnAccounts(const std::string& when) {
    std::map<std::string, std::string> account;
    EXPECT_TRUE(testing::WaitFor(
        [&] {
          account.clear();
          bool consistent = true;
          const bool keys = EnginesIn([&](const std::string& b, const std::string& a) {
            auto [it, fresh] = account.emplace(b, a);
            consistent = consistent && (fresh || it->second == a);
            return IsAccountKey(a);
          });
          return keys && consistent && account["alpha"] != account["beta"];
        },
        60s, 200ms))
        << "engines not in their own accounts: " << json(EngineAccounts()).dump();
    EXPECT_NE(account["alpha"], account["beta"]);
    ExpectNoEngineGaveUp(when);
  }

  // A message published with `backend`'s credentials reaches both of its
  // engines (each logs what it receives).
  void ExpectDelivered(const std::string& backend, int server, const std::string& tag) {
    const std::string body = "{\"switch\":\"" + tag + "\"}";
    const std::string seen = base64::Encode(body);  // engines log payloads in base64
    std::vector<EngineProcess*> mine;
    for (auto& e : engines) {
      if (e->backend() == backend) mine.push_back(e.get());
    }
    ASSERT_EQ(mine.size(), 2u);
    // Published until both got it: a subscription on a just-restarted
    // server propagates over the routes shortly after its connect.
    EXPECT_TRUE(testing::WaitFor(
        [&] {
          auto r = Cli({"pub", "--topic", "engine", body}, EnvAt(backend, server));
          if (r.exit_code != 0) return false;
          for (auto* e : mine) {
            if (e->Log().find(seen) == std::string::npos) return false;
          }
          return true;
        },
        30s, 500ms))
        << backend << "'s message " << tag << " did not reach both of its engines";
  }

  // `other`'s credentials on `backend`'s prefix: refused (the allow-list in
  // either isolation); with Accounts they are in another account anyway.
  void ExpectWalled(const std::string& backend, const std::string& other) {
    auto env = EnvAt(other, 1);
    env["SERVER_MSGQUEUE_PUBSUB_NATS_SUBJECT_PREFIX"] = Prefix(backend);
    const std::string body = "{\"intruder\":\"" + other + "\"}";
    auto pub = Cli({"pub", "--topic", "engine", body}, env);
    EXPECT_NE(pub.exit_code, 0) << other << " published on " << backend << "'s prefix";
    EXPECT_NE(pub.err.find("ermission"), std::string::npos) << pub.err;
    for (auto& e : engines) {
      if (e->backend() == backend) {
        EXPECT_EQ(e->Log().find(base64::Encode(body)), std::string::npos);
      }
    }
  }

  void ExpectCredentialsUnchanged(
      const std::map<std::string, std::map<std::string, std::string>>& envs) {
    for (const auto& [b, env] : envs) EXPECT_EQ(Env(b), env) << b << "'s env Secret changed";
  }

  // After a roll: the env Secrets as they were, every backend Ready, the
  // NatsServer CalloutConfigured with its authorizers available.
  void ExpectSettled(const std::map<std::string, std::map<std::string, std::string>>& envs) {
    ExpectCredentialsUnchanged(envs);
    EXPECT_TRUE(testing::WaitFor([&] { return ReadyCount() == 2; }, 60s, 500ms));
    EXPECT_TRUE(testing::WaitFor(
        [&] {
          return ReadyReasonOfServer() == "CalloutConfigured" &&
                 ConditionOf(Server(), "AuthorizerAvailable").value("status", "") == "True";
        },
        60s, 200ms))
        << Server()["status"].dump(2);
  }

  // Ready=False, naming the rolling restart onto the config Secret.
  bool SaysRestartTheServers() {
    json ready = ConditionOf(Server(), "Ready");
    const std::string m = ready.value("message", "");
    return ready.value("status", "") == "False" &&
           m.find("restart them one at a time") != std::string::npos &&
           m.find(ns + "/" + std::string(kServer) + "-switchboard") != std::string::npos;
  }

  std::string ReadyReasonOfServer() { return ConditionOf(Server(), "Ready").value("reason", ""); }

  void Report(const std::string& step) {
    json s = Server()["status"];
    std::cout << "[" << step << "] Ready=" << ConditionOf(Server(), "Ready").dump()
              << "\n  AuthorizerAvailable=" << ConditionOf(Server(), "AuthorizerAvailable").dump()
              << "\n  operatorMode=" << s.value("operatorMode", json()).dump() << "\n";
  }
};

TEST_F(SwitchingE2E, PermissionsToAccountsAndBack) {
  StartOperator({"--probe-interval", "5m"});
  Apply(ServerYaml({.isolation = "Permissions"}));
  ASSERT_NO_FATAL_FAILURE(StartNats(WaitConfigBody(IsCalloutConfig, "callout config")));
  ASSERT_NO_FATAL_FAILURE(StartAuthorizers(2));
  for (const auto& b : kBackends) CreateBackend(b);
  for (const auto& b : kBackends) ASSERT_TRUE(WaitReady(ns, b, "True", "", 60)) << b;
  std::map<std::string, std::map<std::string, std::string>> envs;
  for (const auto& b : kBackends) envs[b] = Env(b);
  ASSERT_NO_FATAL_FAILURE(StartEngines());
  ASSERT_TRUE(testing::WaitFor(
      [&] { return EnginesIn([](auto&, const std::string& a) { return a == kAccount; }); }, 30s,
      200ms));
  ExpectDelivered("alpha", 2, "permissions-1");

  // Permissions -> Accounts.
  Apply(ServerYaml({.isolation = "Accounts"}));
  const std::string opmode = WaitConfigBody(IsOperatorModeConfig, "operator-mode config");
  ASSERT_FALSE(opmode.empty());
  // The servers still run the Permissions config: the operator says what
  // to do, and the engines stay connected meanwhile.
  EXPECT_TRUE(testing::WaitFor([&] { return SaysRestartTheServers(); }, 60s, 200ms))
      << Server()["status"].dump(2);
  Report("accounts: spec changed, servers not restarted");
  EXPECT_TRUE(EnginesIn([](auto&, const std::string& a) { return a == kAccount; }))
      << json(EngineAccounts()).dump();
  ASSERT_NO_FATAL_FAILURE(RollIntoAccounts(opmode, "accounts"));
  ExpectEnginesInOwnAccounts("after the switch to Accounts");
  ExpectSettled(envs);
  Report("accounts: rolled");
  ExpectDelivered("alpha", 2, "accounts-1");
  ExpectDelivered("beta", 0, "accounts-2");
  ExpectWalled("alpha", "beta");

  // Accounts -> Permissions.
  Apply(ServerYaml({.isolation = "Permissions"}));
  const std::string callout = WaitConfigBody(
      [](const std::string& b) { return IsCalloutConfig(b) && !IsOperatorModeConfig(b); },
      "callout config");
  ASSERT_FALSE(callout.empty());
  Report("permissions: spec changed, servers not restarted");
  ASSERT_NO_FATAL_FAILURE(RollingRestart(callout, [&](int i) {
    EXPECT_TRUE(
        testing::WaitFor([&] { return EnginesIn([](auto&, auto&) { return true; }); }, 60s, 200ms))
        << "after restarting " << cluster->server_name(i) << ": " << json(EngineAccounts()).dump();
    ExpectNoEngineGaveUp("after restarting " + cluster->server_name(i));
    Report("permissions: " + cluster->server_name(i) + " restarted");
  }));
  EXPECT_TRUE(testing::WaitFor(
      [&] { return EnginesIn([](auto&, const std::string& a) { return a == kAccount; }); }, 60s,
      200ms))
      << "engines not back in " << kAccount << ": " << json(EngineAccounts()).dump();
  ExpectNoEngineGaveUp("after the switch back to Permissions");
  ExpectSettled(envs);
  Report("permissions: rolled");
  ExpectDelivered("beta", 1, "permissions-2");
  ExpectWalled("beta", "alpha");
}

TEST_F(SwitchingE2E, IncludeFileToAccounts) {
  StartOperator({"--probe-interval", "5m"});
  Apply(ServerYaml({.mode = "IncludeFile"}));
  for (const auto& b : kBackends) CreateBackend(b);
  // The include file with every installation's user: what each server
  // loads when it starts (no reloader here).
  auto all_rendered = [&](const std::string& body) {
    if (IsCalloutConfig(body)) return false;
    for (const auto& b : kBackends) {
      const std::string user = User(b);
      if (user.empty() || body.find("\"" + user + "\"") == std::string::npos) return false;
    }
    return true;
  };
  ASSERT_NO_FATAL_FAILURE(StartNats(WaitConfigBody(all_rendered, "include file with every user")));
  for (const auto& b : kBackends) ASSERT_TRUE(WaitReady(ns, b, "True", "", 120)) << b;
  std::map<std::string, std::map<std::string, std::string>> envs;
  for (const auto& b : kBackends) envs[b] = Env(b);
  ASSERT_NO_FATAL_FAILURE(StartEngines());
  constexpr char kGlobal[] = "";  // connz names no account for the global one
  ASSERT_TRUE(testing::WaitFor(
      [&] { return EnginesIn([&](auto&, const std::string& a) { return a == kGlobal; }); }, 30s,
      200ms))
      << json(EngineAccounts()).dump();
  ExpectDelivered("beta", 0, "include-file-1");

  // IncludeFile -> AuthCallout with Accounts: the authorizers first (ready
  // once a server runs the new config), then the spec, then the roll.
  ASSERT_NO_FATAL_FAILURE(StartAuthorizers(2, /*wait_ready=*/false));
  Apply(ServerYaml({.mode = "AuthCallout", .isolation = "Accounts"}));
  const std::string opmode = WaitConfigBody(IsOperatorModeConfig, "operator-mode config");
  ASSERT_FALSE(opmode.empty());
  EXPECT_TRUE(testing::WaitFor([&] { return SaysRestartTheServers(); }, 60s, 200ms))
      << Server()["status"].dump(2);
  Report("include file -> accounts: spec changed, servers not restarted");
  ASSERT_NO_FATAL_FAILURE(RollIntoAccounts(opmode, "include file -> accounts"));
  for (auto& a : authorizers) {
    EXPECT_TRUE(testing::WaitFor([&] { return a->Ready(); }, 60s, 100ms)) << LogTail(a->Log());
  }
  ExpectEnginesInOwnAccounts("after the switch");
  ExpectSettled(envs);
  Report("include file -> accounts: rolled");
  ExpectDelivered("alpha", 1, "accounts-after-include-file");
  ExpectWalled("alpha", "beta");
}

}  // namespace
}  // namespace switchboard::e2e
