// What the operator's end-to-end tests run: kubectl against the shared
// local cluster (fixture "cluster"), a real nats-server whose config
// includes the operator's rendered file, switchboard-config-sync reloading
// it, and switchboard-operator processes. Every helper starts only what it
// stops.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "switchboard/testing/process.h"
#include "switchboard/testing/temp_dir.h"

namespace switchboard::e2e {

using json = nlohmann::json;

std::string Kubeconfig();
std::string BinDir();
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
// A nats PubSubBackend.
std::string BackendYaml(const std::string& ns, const std::string& name,
                        const std::string& server_ns, const std::string& server,
                        const std::string& prefix);

}  // namespace switchboard::e2e
