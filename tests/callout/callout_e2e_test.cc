// Auth callout mode as a whole system: a 3-server routed NATS
// cluster (nats-server-callout from the tools cache) whose config is the
// operator's rendered static file, the operator, two switchboard-authorizer
// replicas, N PubSubBackends (SWITCHBOARD_CALLOUT_BACKENDS, default 300)
// and one engine-like connection (`switchboard pubsub sub` with the env
// Secret's variables) per 10 backends, spread over the three servers.
//
// The lifecycle case runs once per isolation: Permissions (every
// installation in the one callout account, HATCHET) and Accounts (NATS
// operator mode: an account per installation, pushed live into each
// server's own resolver store). There an engine's connection counts only in
// its installation's account, the one its backend's status.account names.
//
//   lifecycle  create, rotate, delete each take effect with no reload on
//              any server (config_load_time never moves); an installation
//              may neither publish nor subscribe on another's prefix; a
//              deleted installation's connection is closed (with Accounts
//              its account leaves every resolver store).
//   faults     one authorizer killed, then each NATS server restarted in
//              turn (with Accounts on its own store): every engine is
//              back. Every authorizer killed: the connected engines stay
//              (same connection ids), new connects fail, the NatsServer
//              says AuthorizerAvailable=False; one authorizer back and
//              everything recovers.
//   switch     a NatsServer switched from IncludeFile to AuthCallout and
//              back with a rolling restart, as docs/api.md tells: the
//              engines reconnect with the credentials they already have
//              (env Secrets unchanged) and every backend is Ready again.
//
// Everything is real: kube-apiserver + etcd (fixture "cluster"), the
// binaries of this build. Waits are conditions with deadlines.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "switchboard/testing/callout_cluster.h"
#include "switchboard/testing/wait.h"

namespace switchboard::e2e {
namespace {

using namespace std::chrono_literals;

int Backends() {
  const char* n = std::getenv("SWITCHBOARD_CALLOUT_BACKENDS");
  return n && std::atoi(n) >= 20 ? std::atoi(n) : 300;
}

std::string Name(int i) { return "b" + std::to_string(i); }

class CalloutE2E : public CalloutClusterE2E {
 protected:
  // The engines' connections in `account` on each server: user ->
  // (server index, cid). The operator's probes are not counted.
  // `account`: HATCHET in callout mode; "" for the global account, where
  // an include file with Permissions isolation puts its users.
  std::map<std::string, std::pair<int, uint64_t>> Connections(
      const std::string& account = kAccount) {
    std::map<std::string, std::pair<int, uint64_t>> out;
    const auto users = EngineUsers();
    for (const auto& c : Clients()) {
      if (c.account == account && users.count(c.user)) out[c.user] = {c.server, c.cid};
    }
    return out;
  }
  // The user names of the engines expected connected.
  std::set<std::string> EngineUsers() {
    std::set<std::string> users;
    for (const auto& e : engines) users.insert(engine_user[e->backend()]);
    return users;
  }
  bool AllEnginesConnected(const std::string& account = kAccount) {
    auto conns = Connections(account);
    for (const auto& u : EngineUsers()) {
      if (conns.count(u) == 0) return false;
    }
    return true;
  }
  // A fresh connect with an installation's env Secret (own prefix).
  testing::RunResult Publish(const std::map<std::string, std::string>& env, int server) {
    return CalloutClusterE2E::Publish(WithUrl(env, cluster->url(server)));
  }
  std::string ServerYaml(bool callout = true) const {
    return CalloutClusterE2E::ServerYaml({.mode = callout ? "AuthCallout" : "IncludeFile"});
  }
};

// The lifecycle in one isolation (the parameter: Permissions or Accounts).
class CalloutLifecycleE2E : public CalloutE2E, public ::testing::WithParamInterface<const char*> {
 protected:
  bool OperatorMode() const { return std::string(GetParam()) == "Accounts"; }
  std::string ServerYaml() const {
    return CalloutClusterE2E::ServerYaml({.isolation = GetParam()});
  }
  // The engines' connections in their installation's account: user ->
  // (server index, cid). With Permissions that is kAccount; with Accounts
  // the account its backend's status.account names (backend_account), so
  // an engine in any other account is not connected.
  std::map<std::string, std::pair<int, uint64_t>> Connections() {
    if (!OperatorMode()) return CalloutE2E::Connections(kAccount);
    std::map<std::string, std::string> own;  // user -> account
    for (const auto& e : engines) {
      own[engine_user[e->backend()]] = backend_account[e->backend()];
    }
    std::map<std::string, std::pair<int, uint64_t>> out;
    for (const auto& c : Clients()) {
      auto it = own.find(c.user);
      if (it != own.end() && !it->second.empty() && c.account == it->second) {
        out[c.user] = {c.server, c.cid};
      }
    }
    return out;
  }
  bool AllEnginesConnected() {
    auto conns = Connections();
    for (const auto& u : EngineUsers()) {
      if (conns.count(u) == 0) return false;
    }
    return true;
  }
  // Every backend's status.account into backend_account; whether each
  // names one.
  bool ReadBackendAccounts() {
    backend_account.clear();
    for (const auto& b : ListBackends()) {
      const std::string account = b["status"].value("account", "");
      if (account.empty()) return false;
      backend_account[b["metadata"].value("name", "")] = account;
    }
    return true;
  }
  std::map<std::string, std::string> backend_account;  // Accounts: backend -> account key
};

TEST_P(CalloutLifecycleE2E, LifecycleWithoutReloadsIsolationAndAuthorizerFaults) {
  const int n = Backends();

  // The operator renders the static config before any NATS server runs:
  // the server needs auth_callout at start.
  StartOperator({"--workers", "8", "--probe-interval", "5m"});
  Apply(ServerYaml());
  const std::string body = OperatorMode()
                               ? WaitConfigBody(IsOperatorModeConfig, "operator-mode config")
                               : WaitConfigBody(IsCalloutConfig, "callout config");
  ASSERT_NO_FATAL_FAILURE(StartNats(body));
  StartAuthorizers(2);
  EXPECT_TRUE(testing::WaitFor(
      [&] { return ConditionOf(Server(), "AuthorizerAvailable").value("status", "") == "True"; },
      60s, 200ms))
      << Server().dump(2);
  const json status = Server()["status"];
  if (OperatorMode()) {
    // No shared account: status.operatorMode names the operator's keys.
    EXPECT_EQ(status["authCallout"].value("account", ""), "") << status.dump(2);
    EXPECT_FALSE(status["authCallout"].value("issuer", "").empty()) << status.dump(2);
    EXPECT_TRUE(testing::WaitFor(
        [&] {
          json s = Server()["status"];
          return !s["operatorMode"].value("operator", "").empty() &&
                 s["operatorMode"].value("servers", 0) == 3;
        },
        60s, 200ms))
        << Server()["status"].dump(2);
  } else {
    EXPECT_EQ(status["authCallout"].value("account", ""), kAccount) << status.dump(2);
  }
  EXPECT_EQ(status["authCallout"].value("servers", 0), 3) << status.dump(2);

  for (int i = 0; i < n; i++) CreateBackend(Name(i));
  ASSERT_TRUE(testing::WaitFor([&] { return ReadyCount() == n; }, 240s, 500ms))
      << ReadyCount() << " of " << n << " Ready; " << Name(0) << ": "
      << Get("psb", ns, Name(0)).value("status", json()).dump();
  // The server's count follows: its reconciles are spaced
  // (callout_status_interval) during the burst, and the last one, deferred
  // after the last change, must still run.
  EXPECT_TRUE(testing::WaitFor([&] { return Server()["status"].value("installations", -1) == n; },
                               30s, 200ms))
      << Server()["status"].dump(2);
  if (OperatorMode()) {
    // An account per installation, each its own, in every server's store.
    EXPECT_TRUE(testing::WaitFor(
        [&] {
          json s = Server()["status"];
          return s["operatorMode"].value("accounts", 0) == n &&
                 s["operatorMode"].value("servers", 0) == 3;
        },
        60s, 200ms))
        << Server()["status"].dump(2);
    ASSERT_TRUE(testing::WaitFor([&] { return ReadBackendAccounts(); }, 30s, 200ms))
        << "a Ready backend names no status.account";
    std::set<std::string> distinct;
    for (const auto& [backend, account] : backend_account) distinct.insert(account);
    EXPECT_EQ(distinct.size(), static_cast<size_t>(n)) << "installations share an account";
    EXPECT_EQ(distinct.count(status["authCallout"].value("issuer", "")), 0u)
        << "an installation in the auth account";
    EXPECT_TRUE(testing::WaitFor(
        [&] {
          for (const auto& [backend, account] : backend_account) {
            if (!EveryStoreHolds(account)) return false;
          }
          return true;
        },
        60s, 500ms))
        << "not every account in every resolver store";
  }
  const auto load_times = LoadTimes();
  for (const auto& t : load_times) ASSERT_TRUE(t.has_value());

  // One engine per 10 backends, server i % 3.
  for (int i = 0; i < n; i += 10) {
    auto env = Env(Name(i));
    ASSERT_FALSE(env.empty()) << Name(i);
    StartEngine(Name(i), WithUrl(env, cluster->url((i / 10) % 3)));
  }
  WaitEnginesSubscribed();
  ASSERT_TRUE(AllEnginesConnected());
  {
    auto conns = Connections();
    std::set<int> servers;
    for (const auto& u : EngineUsers()) servers.insert(conns[u].first);
    EXPECT_EQ(servers.size(), 3u) << "engines spread over the three servers";
  }
  if (OperatorMode()) {
    // The wall: each engine's one connection is in its installation's
    // account and in no other.
    for (const auto& e : engines) {
      EXPECT_EQ(AccountsOf(engine_user[e->backend()]),
                std::multiset<std::string>{backend_account[e->backend()]})
          << e->backend();
    }
    EXPECT_NE(backend_account[Name(0)], backend_account[Name(10)]);
  }

  // Create: one more installation, Ready and connecting, no reload.
  CreateBackend("extra");
  EXPECT_TRUE(WaitReady(ns, "extra", "True", "", 30)) << Get("psb", ns, "extra").dump(2);
  {
    auto r = Publish(Env("extra"), 2);
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_EQ(LoadTimes(), load_times) << "a create reloaded a server";

  // Isolation: b0's credentials on b1's prefix, both directions.
  {
    auto env = WithUrl(Env(Name(0)), cluster->url(1));
    env["SERVER_MSGQUEUE_PUBSUB_NATS_SUBJECT_PREFIX"] = Prefix(Name(1));
    auto pub = Cli({"pub", "--topic", "x", "{}"}, env);
    EXPECT_EQ(pub.exit_code, 1) << pub.out << pub.err;
    EXPECT_NE(pub.err.find("ermission"), std::string::npos) << pub.err;
    auto sub = Cli({"sub", "--topic", "x", "--timeout", "10s"}, env);
    EXPECT_EQ(sub.exit_code, 1) << sub.out << sub.err;
    EXPECT_NE(sub.err.find("ermission"), std::string::npos) << sub.err;
    auto own = Publish(Env(Name(0)), 1);
    EXPECT_EQ(own.exit_code, 0) << own.err;
  }

  // Rotate b0 (it has an engine): same user name, a new password; the old
  // one keeps working until the rotation is acknowledged, then it is
  // refused and its connection closed.
  {
    const std::string b = Name(0);
    const auto before = Env(b);
    const std::string user = before.at("SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME");
    auto r = Kubectl({"annotate", "psb", "-n", ns, b, "pubsub.switchboard.dev/rotate-password=t1"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::map<std::string, std::string> after;
    ASSERT_TRUE(testing::WaitFor(
        [&] {
          after = Env(b);
          return after["SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD"] !=
                 before.at("SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD");
        },
        30s, 200ms))
        << Get("psb", ns, b).dump(2);
    EXPECT_EQ(after["SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME"], user) << "a rotation keeps the name";
    EXPECT_EQ(Publish(after, 0).exit_code, 0) << "the new password";
    EXPECT_EQ(Publish(before, 2).exit_code, 0) << "the old password, within the grace period";
    EXPECT_TRUE(AllEnginesConnected()) << "b0's engine is not cut off by the rotation";
    r = Kubectl(
        {"annotate", "psb", "-n", ns, b, "pubsub.switchboard.dev/rotation-acknowledged=t1"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(testing::WaitFor([&] { return Publish(before, 1).exit_code != 0; }, 30s, 200ms))
        << "the retired password is still accepted";
    EXPECT_TRUE(testing::WaitFor([&] { return Connections().count(user) == 0; }, 30s, 200ms))
        << "the engine on the retired password is still connected";
    EXPECT_EQ(Publish(after, 1).exit_code, 0) << "the new password after the retirement";
    // The engine restarts with the new env Secret, as a rollout would.
    std::erase_if(engines, [&](const auto& e) { return e->backend() == b; });
    StartEngine(b, WithUrl(after, cluster->url(0)));
    EXPECT_TRUE(testing::WaitFor([&] { return AllEnginesConnected(); }, 30s));
  }
  EXPECT_EQ(LoadTimes(), load_times) << "a rotation reloaded a server";

  // Delete b10 (it has an engine): refused from then on, its connection
  // closed; with Accounts its account leaves every server's store.
  {
    const std::string b = Name(10);
    const auto env = Env(b);
    const std::string user = engine_user[b];
    const std::string account = backend_account[b];
    ASSERT_TRUE(Connections().count(user));
    auto r = Kubectl({"delete", "psb", "-n", ns, b, "--timeout=30s"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(testing::WaitFor([&] { return Connections().count(user) == 0; }, 30s, 200ms))
        << "the deleted installation's connection is still open";
    EXPECT_NE(Publish(env, 0).exit_code, 0) << "the deleted installation still connects";
    std::erase_if(engines, [&](const auto& e) { return e->backend() == b; });
    if (OperatorMode()) {
      EXPECT_TRUE(AccountsOf(user).empty()) << "the deleted installation is still connected";
      EXPECT_TRUE(testing::WaitFor([&] { return NoStoreHolds(account); }, 60s, 200ms))
          << "the deleted installation's account " << account << " is still in a store";
      EXPECT_TRUE(EveryStoreHolds(backend_account[Name(1)]));
    }
  }
  EXPECT_EQ(LoadTimes(), load_times) << "a deletion reloaded a server";
  EXPECT_EQ(ReadyCount(), n) << "every other installation stayed Ready";

  // Faults 1: one authorizer gone, then each NATS server restarted in turn
  // (with Accounts on its own store, kept).
  authorizers[0]->Kill();
  for (int i = 0; i < cluster->size(); i++) {
    ASSERT_TRUE(cluster->RestartServer(i)) << cluster->error();
    EXPECT_TRUE(testing::WaitFor([&] { return AllEnginesConnected(); }, 60s, 200ms))
        << "after restarting " << cluster->server_name(i) << ": "
        << EngineUsers().size() - Connections().size() << " engines missing";
    for (auto& e : engines) EXPECT_TRUE(e->running()) << e->backend() << " gave up:\n" << e->Log();
  }
  ASSERT_TRUE(testing::WaitFor([&] { return authorizers[1]->Ready(); }, 30s));

  // Faults 2: no authorizer at all while nothing reconnects.
  const auto before = Connections();
  authorizers[1]->Kill();
  EXPECT_TRUE(testing::WaitFor(
      [&] { return ConditionOf(Server(), "AuthorizerAvailable").value("status", "") == "False"; },
      60s, 200ms))
      << Server().dump(2);
  EXPECT_NE(Publish(Env(Name(1)), 0).exit_code, 0) << "a new connect passed with no authorizer";
  EXPECT_EQ(Connections(), before) << "connected engines were disturbed";
  for (auto& e : engines) EXPECT_TRUE(e->running()) << e->backend();

  // One authorizer returns: new connects pass, the condition recovers.
  authorizers[0] = NewAuthorizer();
  ASSERT_TRUE(testing::WaitFor([&] { return authorizers[0]->Ready(); }, 60s, 100ms))
      << LogTail(authorizers[0]->Log());
  EXPECT_TRUE(testing::WaitFor(
      [&] { return ConditionOf(Server(), "AuthorizerAvailable").value("status", "") == "True"; },
      60s, 200ms))
      << Server().dump(2);
  EXPECT_TRUE(
      testing::WaitFor([&] { return Publish(Env(Name(1)), 0).exit_code == 0; }, 30s, 200ms));
  EXPECT_EQ(Connections(), before) << "connected engines were disturbed by the recovery";
}

INSTANTIATE_TEST_SUITE_P(Isolation, CalloutLifecycleE2E,
                         ::testing::Values("Permissions", "Accounts"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

// docs/api.md "Switching a NatsServer between modes", step by step, with
// engines connected throughout: IncludeFile -> AuthCallout -> IncludeFile,
// each a config change then NATS restarted one server at a time.
TEST_F(CalloutE2E, SwitchingModesEnginesReconnectWithTheirCredentials) {
  constexpr int n = 6;
  constexpr char kGlobal[] = "";  // connz: no account named
  StartOperator({"--workers", "4", "--probe-interval", "5m"});
  Apply(ServerYaml(false));
  for (int i = 0; i < n; i++) CreateBackend(Name(i));

  // IncludeFile: NATS starts once every user is in the rendered file (no
  // reloader here: the file is what each server loads when it starts).
  std::map<std::string, std::map<std::string, std::string>> envs;
  auto all_rendered = [&](const std::string& body) {
    for (int i = 0; i < n; i++) {
      auto env = Env(Name(i));
      auto user = env["SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME"];
      if (user.empty() || body.find("\"" + user + "\"") == std::string::npos) return false;
      envs[Name(i)] = env;
    }
    return body.find("auth_callout") == std::string::npos;
  };
  ASSERT_NO_FATAL_FAILURE(StartNats(WaitConfigBody(all_rendered, "include file with every user")));
  ASSERT_TRUE(testing::WaitFor([&] { return ReadyCount() == n; }, 120s, 500ms))
      << ReadyCount() << " of " << n << " Ready; " << Get("psb", ns, Name(0)).dump(2);
  for (int i = 0; i < n; i += 2) {
    StartEngine(Name(i), WithUrl(envs[Name(i)], cluster->url((i / 2) % 3)));
  }
  WaitEnginesSubscribed();
  ASSERT_TRUE(testing::WaitFor([&] { return AllEnginesConnected(kGlobal); }, 30s));

  // Rolling restart onto the current config Secret; after each server the
  // engines are all connected again (on any server) and none gave up.
  auto rolling_restart = [&](const std::string& account_after) {
    RollingRestart(ConfigBody(), [&](int i) {
      EXPECT_TRUE(testing::WaitFor(
          [&] {
            auto in_old = Connections(account_after == kGlobal ? kAccount : kGlobal);
            auto in_new = Connections(account_after);
            for (const auto& u : EngineUsers()) {
              if (!in_old.count(u) && !in_new.count(u)) return false;
            }
            return true;
          },
          60s, 200ms))
          << "after restarting " << cluster->server_name(i);
      for (auto& e : engines)
        EXPECT_TRUE(e->running()) << e->backend() << " gave up:\n" << e->Log();
    });
    EXPECT_TRUE(testing::WaitFor([&] { return AllEnginesConnected(account_after); }, 60s, 200ms))
        << "engines not all back in account '" << account_after << "'";
  };
  auto credentials_unchanged = [&] {
    for (int i = 0; i < n; i++) {
      EXPECT_EQ(Env(Name(i)), envs[Name(i)]) << Name(i) << "'s env Secret changed";
    }
  };

  // IncludeFile -> AuthCallout: authorizers first (they get in once a
  // server runs the static config), then the mode, then the restart.
  StartAuthorizers(2, /*wait_ready=*/false);
  Apply(ServerYaml(true));
  ASSERT_FALSE(WaitConfigBody(IsCalloutConfig, "callout config").empty());
  rolling_restart(kAccount);
  for (auto& a : authorizers) {
    EXPECT_TRUE(testing::WaitFor([&] { return a->Ready(); }, 60s, 100ms)) << LogTail(a->Log());
  }
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        return ConditionOf(Server(), "Ready").value("reason", "") == "CalloutConfigured" &&
               ConditionOf(Server(), "AuthorizerAvailable").value("status", "") == "True";
      },
      60s, 200ms))
      << Server().dump(2);
  credentials_unchanged();
  for (int i = 0; i < n; i++) {
    EXPECT_EQ(Publish(envs[Name(i)], i % 3).exit_code, 0) << Name(i) << " through the callout";
  }

  // AuthCallout -> IncludeFile: the users rendered again, then the restart.
  Apply(ServerYaml(false));
  ASSERT_FALSE(WaitConfigBody(all_rendered, "include file with every user").empty());
  rolling_restart(kGlobal);
  credentials_unchanged();
  EXPECT_TRUE(testing::WaitFor([&] { return ReadyCount() == n; }, 60s, 500ms))
      << ReadyCount() << " of " << n << " Ready";
  EXPECT_EQ(ConditionOf(Server(), "Ready").value("reason", ""), "ConfigRendered")
      << Server().dump(2);
  for (int i = 0; i < n; i++) {
    EXPECT_EQ(Publish(envs[Name(i)], (i + 1) % 3).exit_code, 0) << Name(i) << " from the file";
  }
}

}  // namespace
}  // namespace switchboard::e2e
