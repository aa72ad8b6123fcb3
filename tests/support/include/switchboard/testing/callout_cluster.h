// The whole system in AuthCallout mode, as a gtest fixture other e2e tests
// derive from: a real kube-apiserver + etcd (ctest fixture "cluster"), a
// namespace of the test's own, three routed nats-server-callout (tools
// cache) started on the static config the operator wrote into the
// NatsServer's config Secret, the operator, switchboard-authorizer
// replicas, backends and engine-like connections (`switchboard pubsub sub`
// with an installation's env Secret, reconnecting forever).
//
// Every mode a NatsServer may be in is started the same way, so a test can
// switch between them: IncludeFile (the rendered include file is what each
// server loads when it starts; no reloader), AuthCallout with Permissions
// (one callout account) and AuthCallout with Accounts (NATS operator mode:
// each server its own full resolver store, ResolverDir() in the NatsServer
// and StoreOf(i) on server i). A switch is a new spec, then
// RollingRestart(): each server stopped and started on the config the
// Secret holds now, one at a time, as a StatefulSet rolls.
//
// Nothing runs until the test starts it; TearDown stops everything it
// started (engines, authorizers, operator, then the namespace without
// finalizing its backends: AbandonNamespace, and the servers) and prints
// the logs' tails when the test failed. Waits are conditions with deadlines.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "switchboard/kube/client.h"
#include "switchboard/testing/e2e_harness.h"
#include "switchboard/testing/nats_accounts.h"
#include "switchboard/testing/nats_cluster.h"
#include "switchboard/testing/process.h"
#include "switchboard/testing/temp_dir.h"

namespace switchboard::e2e {

// The condition `type` of obj ({status, reason, message, ...}); an empty
// object when absent.
json ConditionOf(const json& obj, const std::string& type);

// `switchboard pubsub sub --topic engine` with an installation's env: an
// engine's connection, reconnecting forever (as Hatchet's engine does),
// until destroyed. Its stdout logs every message it receives.
class EngineProcess {
 public:
  EngineProcess(const std::string& log_path, const std::string& backend,
                const std::map<std::string, std::string>& env);
  ~EngineProcess();
  // It logged its subscription (connected at least once).
  bool Subscribed() const;
  bool running() { return proc_.running(); }
  // nats.c closed the connection for good (e.g. the same authorization
  // error twice from one server): it will not reconnect.
  bool GaveUp() const;
  const std::string& backend() const { return backend_; }
  std::string Log() const { return testing::ReadFile(log_); }

 private:
  std::string backend_;
  std::string log_;
  testing::Process proc_;
};

class CalloutClusterE2E : public ::testing::Test {
 protected:
  static constexpr char kServer[] = "callout";
  static constexpr char kAccount[] = "HATCHET";  // the callout account (Permissions)

  // What the NatsServer says; ServerYaml renders it.
  struct ServerSpec {
    std::string mode = "AuthCallout";       // or IncludeFile
    std::string isolation = "Permissions";  // or Accounts
  };

  void SetUp() override;
  void TearDown() override;

  // --- The NatsServer ------------------------------------------------------
  // ns/kServer at the cluster's URLs; with AuthCallout the account is
  // kAccount, with Accounts the resolver store is ResolverDir().
  std::string ServerYaml(const ServerSpec& spec) const;
  json Server() const { return Get("natsserver", ns, kServer); }
  // The config Secret's body (include file or static config); "" when none.
  std::string ConfigBody() const;
  // Waits until the config Secret's body passes `ready` and returns it;
  // "" (and a test failure naming `what`) when it did not within `timeout`.
  std::string WaitConfigBody(const std::function<bool(const std::string&)>& ready,
                             const std::string& what,
                             std::chrono::milliseconds timeout = std::chrono::seconds(60));
  // The static config of each mode, by what only it holds (nats_accounts.h).
  static bool IsCalloutConfig(const std::string& body) { return e2e::IsCalloutConfig(body); }
  static bool IsOperatorModeConfig(const std::string& body) {
    return e2e::IsOperatorModeConfig(body);
  }

  // --- NATS ----------------------------------------------------------------
  // The resolver store the NatsServer names; each server gets its own
  // directory beside it (one config body, three local processes).
  std::string ResolverDir() const { return cluster->dir() + "/resolver"; }
  std::string StoreOf(int i) const { return StoreDir(ResolverDir(), i); }
  // Whether every server's store holds `account`'s JWT; whether none does.
  bool EveryStoreHolds(const std::string& account) const;
  bool NoStoreHolds(const std::string& account) const;
  // `body` for each server: its own resolver store in place of
  // ResolverDir(); the same body for all when it names none.
  std::vector<std::string> Bodies(const std::string& body) const;
  // Every server started on `body`; asserts.
  void StartNats(const std::string& body);
  // Each server in turn stopped and started on `body` (SIGTERM: its clients
  // close first, as a pod's termination does), routed again, then
  // after_each(i) runs; asserts.
  void RollingRestart(const std::string& body, const std::function<void(int)>& after_each = {});
  // /varz config_load_time of each server: moves with every (re)load.
  std::vector<std::optional<std::string>> LoadTimes() const { return e2e::LoadTimes(*cluster); }
  // Every client connection of every running server with an authorized
  // user (the operator's probes included).
  std::vector<ClientConn> Clients() const { return e2e::Clients(*cluster); }
  // The accounts `user`'s connections are in, one entry per connection.
  std::multiset<std::string> AccountsOf(const std::string& user) const;

  // --- Processes -----------------------------------------------------------
  // The operator watching ns, with `extra` flags.
  void StartOperator(const std::vector<std::string>& extra = {});
  // `count` more authorizers serving ns/kServer, each waited until ready
  // when `wait_ready` (an authorizer is ready once it is subscribed on
  // every server: not before the servers run a callout config); asserts.
  void StartAuthorizers(int count, bool wait_ready = true);
  std::unique_ptr<AuthorizerProcess> NewAuthorizer() const;

  // --- Backends and engines ------------------------------------------------
  static std::string Prefix(const std::string& backend) { return "hatchet." + backend; }
  // A nats backend on kServer with prefix Prefix(name); `limits`, when an
  // object, is its spec.nats.limits. Asserts.
  void CreateBackend(const std::string& name, const json& limits = nullptr);
  std::vector<json> ListBackends() const;
  int ReadyCount() const;
  // The installation's env Secret; with a server, its URL that server's.
  std::map<std::string, std::string> Env(const std::string& backend) const;
  std::map<std::string, std::string> EnvAt(const std::string& backend, int server) const;
  static std::map<std::string, std::string> WithUrl(std::map<std::string, std::string> env,
                                                    const std::string& url);
  // SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME of the env Secret.
  std::string User(const std::string& backend) const;
  // `switchboard pubsub <args>` with `env` (a fresh connection each run).
  static testing::RunResult Cli(const std::vector<std::string>& args,
                                const std::map<std::string, std::string>& env);
  // `switchboard pubsub pub --topic <topic> {}`.
  static testing::RunResult Publish(const std::map<std::string, std::string>& env,
                                    const std::string& topic = "probe");
  // An engine of `backend` on `env`, kept in `engines` (its user name in
  // engine_user); returns it.
  EngineProcess& StartEngine(const std::string& backend,
                             const std::map<std::string, std::string>& env);
  // engines[i] stopped and a new engine of the same backend started in its
  // place on `env`, as its pod would be (after giving up, or with a new env
  // Secret); returns it.
  EngineProcess& RestartEngine(size_t i, const std::map<std::string, std::string>& env);
  // Waits until every engine logged its subscription; asserts.
  void WaitEnginesSubscribed(std::chrono::milliseconds timeout = std::chrono::seconds(30));

  std::unique_ptr<kube::Client> client;
  std::string ns;
  std::unique_ptr<testing::NatsCluster> cluster;
  std::unique_ptr<OperatorProcess> op;
  std::vector<std::unique_ptr<AuthorizerProcess>> authorizers;
  std::vector<std::unique_ptr<EngineProcess>> engines;
  std::map<std::string, std::string> engine_user;  // backend -> user name
  testing::TempDir engine_dir;

 private:
  // A log file of its own for the next engine of `backend`.
  std::string NextEngineLog(const std::string& backend);
  int engines_started_ = 0;
};

}  // namespace switchboard::e2e
