// What the operator's end-to-end tests run: kubectl against the shared
// local cluster (fixture "cluster"), a real nats-server whose config
// includes the operator's rendered file, switchboard-config-sync reloading
// it, switchboard-operator processes, and for AuthCallout mode
// nats-server-callout on the operator's static config (one server, or three
// routed ones each with its own resolver store in operator mode) with
// switchboard-authorizer replicas. Every helper starts only what it stops.
#pragma once

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "switchboard/testing/nats_cluster.h"
#include "switchboard/testing/process.h"
#include "switchboard/testing/temp_dir.h"

namespace switchboard::e2e {

using json = nlohmann::json;

std::string Kubeconfig();
std::string BinDir();
// The last `n` bytes of a log, for a failure message.
std::string LogTail(const std::string& log, size_t n = 6000);
// A name unique to this process and call ("<base>-<pid>-<n>").
std::string UniqueName(const std::string& base);

testing::RunResult Kubectl(const std::vector<std::string>& args,
                           const std::string& stdin_data = "");
// kubectl apply -f - ; fails the test on error.
void Apply(const std::string& yaml);
// kubectl get -o json; null when absent.
json Get(const std::string& resource, const std::string& ns, const std::string& name);
// data of a Secret, decoded; empty when absent.
std::map<std::string, std::string> SecretData(const std::string& ns, const std::string& name);
// The Ready condition's status and reason ("" when absent).
std::string ReadyStatus(const json& obj);
std::string ReadyReason(const json& obj);
// Waits until psb ns/name has Ready=<status> (and reason, when given).
bool WaitReady(const std::string& ns, const std::string& name, const std::string& status = "True",
               const std::string& reason = "", int seconds = 30);
void CreateNamespace(const std::string& ns);
// Deletes the backends (the operator must still run: finalizers) and the namespace.
void DeleteNamespace(const std::string& ns);
// For a test whose operators have stopped: drops the finalizers on its
// backends and NatsServers (nothing is left to clean up: the test's NATS
// servers stop with it) and deletes the namespace without waiting.
// DeleteNamespace lets a running operator finalize each backend instead,
// which with hundreds of backends is most of a test's teardown.
void AbandonNamespace(const std::string& ns);

// nats-server on a free loopback port: nats.conf includes switchboard.conf.
class LocalNats {
 public:
  LocalNats();
  ~LocalNats();
  bool ok() const { return ok_; }
  int port() const { return port_; }
  std::string url() const { return "nats://127.0.0.1:" + std::to_string(port_); }
  std::string monitor_url() const { return "http://127.0.0.1:" + std::to_string(monitor_port_); }
  std::string include_path() const { return dir_.path() + "/switchboard.conf"; }
  std::string pid_file() const { return dir_.path() + "/nats.pid"; }
  std::string dir() const { return dir_.path(); }
  std::string IncludeText() const;
  testing::Process& process() { return proc_; }

 private:
  testing::TempDir dir_;
  int port_ = 0;
  int monitor_port_ = 0;
  testing::Process proc_;
  bool ok_ = false;
};

// switchboard-config-sync mirroring ns/secret into nats' include file.
testing::Process StartConfigSync(const LocalNats& nats, const std::string& ns,
                                 const std::string& secret);

// switchboard-operator watching `namespaces`, fast probe settings.
class OperatorProcess {
 public:
  OperatorProcess(const std::vector<std::string>& namespaces,
                  const std::vector<std::string>& extra_args = {});
  ~OperatorProcess();
  bool Healthy();  // /healthz answers 200
  std::string Metrics();
  testing::Process& process() { return proc_; }
  std::string Log() const { return proc_.Log(); }

 private:
  testing::TempDir dir_;
  int health_port_ = 0;
  int metrics_port_ = 0;
  testing::Process proc_;
};

// A NatsServer named `name` in `ns` at `url`, admitting `allowed` namespaces.
std::string NatsServerYaml(const std::string& ns, const std::string& name, const std::string& url,
                           const std::vector<std::string>& allowed);
// The same NatsServer in AuthCallout mode (default account and Secret names).
std::string CalloutServerYaml(const std::string& ns, const std::string& name,
                              const std::string& url, const std::vector<std::string>& allowed);
// A nats PubSubBackend.
std::string BackendYaml(const std::string& ns, const std::string& name,
                        const std::string& server_ns, const std::string& server,
                        const std::string& prefix);

// The nats-server built with auth callout support (tools cache:
// $SWITCHBOARD_TOOLS_DIR/bin/nats-server-callout).
std::string CalloutNatsServerBinary();

// switchboard-authorizer serving `server` ("ns/name"), watching
// `namespaces`; health and metrics on one free loopback port.
class AuthorizerProcess {
 public:
  // `server` "" serves every NatsServer in `namespaces`; `extra` flags
  // follow (e.g. --kick-after 0).
  AuthorizerProcess(const std::vector<std::string>& namespaces, const std::string& server,
                    const std::vector<std::string>& extra = {});
  ~AuthorizerProcess();
  // GET `path`: the body when 200, "" otherwise.
  std::string Get(const std::string& path) const;
  // GET `path`: the status (0 when no answer) and the body.
  std::pair<int, std::string> Fetch(const std::string& path) const;
  // /readyz: caches synced and subscribed on every server it can reach.
  bool Ready() const { return !Get("/readyz").empty(); }
  std::string Metrics() const { return Get("/metrics"); }
  std::string Log() const { return proc_.Log(); }
  // SIGKILL, and waits until it is gone.
  void Kill();
  testing::Process& process() { return proc_; }

 private:
  testing::TempDir dir_;
  int port_ = 0;
  testing::Process proc_;
};

// A NatsServer in AuthCallout mode as the chart runs it: nats-server-callout
// started on the static config the operator wrote into the config Secret
// (auth_callout is not reloadable: the server needs it at start), and
// switchboard-authorizer replicas answering its callout. One server with
// isolation Permissions by default (one callout account); with
// isolation Accounts (NATS operator mode) the NatsServer names a resolver
// directory and each server gets a store of its own (nats_accounts.h), as
// each pod of a StatefulSet has, the full resolver sharing the account JWTs
// between them. The ports are chosen at construction, so url() can go into
// the NatsServer before its config exists; nothing runs until the Start
// calls. Destroying it stops the authorizers, then the servers.
class CalloutNats {
 public:
  struct Options {
    // Servers, routed to each other. Where more than one server is
    // involved, three.
    int size = 1;
    std::string isolation = "Permissions";  // or "Accounts"
  };
  // Serves the NatsServer ns/name; the authorizers watch `namespaces`.
  CalloutNats(std::string ns, std::string name, std::vector<std::string> namespaces);
  CalloutNats(std::string ns, std::string name, std::vector<std::string> namespaces,
              Options options);
  ~CalloutNats();
  CalloutNats(const CalloutNats&) = delete;
  CalloutNats& operator=(const CalloutNats&) = delete;

  // One server: its URL; more: every server's (a seed list).
  std::string url() const { return nats_.size() == 1 ? nats_.url(0) : nats_.urls(); }
  std::string url(int i) const { return nats_.url(i); }
  int size() const { return nats_.size(); }
  bool accounts() const { return options_.isolation == "Accounts"; }
  // The NatsServer ns/name at url() in this isolation (Accounts: the
  // resolver directory resolver_dir()), admitting `allowed` namespaces.
  std::string ServerYaml(const std::vector<std::string>& allowed = {}) const;
  // Accounts: what the NatsServer names, and server i's own store.
  std::string resolver_dir() const { return nats_.dir() + "/resolver"; }
  std::string store(int i) const;

  // Starts every server on `static_config` (each its own store);
  // false with the reason in error().
  bool StartServer(const std::string& static_config);
  // Waits until the config Secret holds the static config of this
  // isolation (IsCalloutConfig, IsOperatorModeConfig) and starts the
  // servers on it; the config is then in static_config().
  bool StartServerFromSecret(std::chrono::milliseconds timeout);
  // Starts `count` more authorizers and waits until each is ready.
  bool StartAuthorizers(int count, std::chrono::milliseconds timeout);

  const std::string& static_config() const { return static_config_; }
  // /varz config_load_time of server 0; of every server: moves with every
  // (re)load of the config.
  std::optional<std::string> ConfigLoadTime() const { return nats_.ConfigLoadTime(0); }
  std::vector<std::optional<std::string>> LoadTimes() const;
  testing::NatsCluster& nats() { return nats_; }
  int authorizers() const { return static_cast<int>(authorizers_.size()); }
  AuthorizerProcess& authorizer(int i) { return *authorizers_.at(static_cast<size_t>(i)); }
  const std::string& error() const { return error_; }
  // The tails of every server's and every authorizer's log, for a failure.
  std::string Logs(size_t tail = 3000) const;

 private:
  std::string ns_, name_;
  std::vector<std::string> namespaces_;
  Options options_;
  testing::NatsCluster nats_;
  std::vector<std::unique_ptr<AuthorizerProcess>> authorizers_;
  std::string static_config_;
  std::string error_;
};

}  // namespace switchboard::e2e
