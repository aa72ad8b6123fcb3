#include "switchboard/testing/e2e_harness.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <thread>

#include "switchboard/api/constants.h"
#include "switchboard/api/names.h"
#include "switchboard/common/base64.h"
#include "switchboard/kube/client.h"
#include "switchboard/kube/config.h"
#include "switchboard/kube/resource.h"
#include "switchboard/testing/nats_accounts.h"
#include "switchboard/testing/net.h"
#include "switchboard/testing/tool_path.h"
#include "switchboard/testing/wait.h"

namespace switchboard::e2e {

using namespace std::chrono_literals;

std::string Kubeconfig() {
  const char* k = std::getenv("SWITCHBOARD_KUBECONFIG");
  return k ? k : "";
}

std::string BinDir() {
  const char* b = std::getenv("SWITCHBOARD_BINARY_DIR");
  return std::string(b ? b : ".") + "/bin";
}

std::string LogTail(const std::string& log, size_t n) {
  return log.size() > n ? log.substr(log.size() - n) : log;
}

std::string UniqueName(const std::string& base) {
  static std::atomic<int> n{0};
  return base + "-" + std::to_string(getpid()) + "-" + std::to_string(n++);
}

testing::RunResult Kubectl(const std::vector<std::string>& args, const std::string& stdin_data) {
  std::vector<std::string> argv = {"kubectl", "--kubeconfig", Kubeconfig()};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::Run(argv, {}, stdin_data, 60s);
}

void Apply(const std::string& yaml) {
  auto r = Kubectl({"apply", "-f", "-"}, yaml);
  ASSERT_EQ(r.exit_code, 0) << r.err << "\n" << yaml;
}

json Get(const std::string& resource, const std::string& ns, const std::string& name) {
  auto r = Kubectl({"get", resource, "-n", ns, name, "-o", "json", "--ignore-not-found"});
  if (r.exit_code != 0 || r.out.empty()) return nullptr;
  return json::parse(r.out, nullptr, false);
}

std::map<std::string, std::string> SecretData(const std::string& ns, const std::string& name) {
  std::map<std::string, std::string> out;
  json s = Get("secret", ns, name);
  if (!s.is_object() || !s.contains("data")) return out;
  for (auto it = s["data"].begin(); it != s["data"].end(); ++it) {
    if (!it.value().is_string() || !base64::Decode(it.value().get<std::string>(), &out[it.key()])) {
      ADD_FAILURE() << "Secret " << ns << "/" << name << " key " << it.key() << " is not base64";
    }
  }
  return out;
}

static const json* ReadyCond(const json& obj) {
  if (!obj.is_object() || !obj.contains("status") || !obj["status"].contains("conditions"))
    return nullptr;
  for (const auto& c : obj["status"]["conditions"]) {
    if (c.value("type", "") == "Ready") return &c;
  }
  return nullptr;
}

std::string ReadyStatus(const json& obj) {
  const json* c = ReadyCond(obj);
  return c ? c->value("status", "") : "";
}

std::string ReadyReason(const json& obj) {
  const json* c = ReadyCond(obj);
  return c ? c->value("reason", "") : "";
}

bool WaitReady(const std::string& ns, const std::string& name, const std::string& status,
               const std::string& reason, int seconds) {
  return testing::WaitFor(
      [&] {
        json o = Get("psb", ns, name);
        return ReadyStatus(o) == status && (reason.empty() || ReadyReason(o) == reason);
      },
      std::chrono::seconds(seconds), 100ms);
}

void CreateNamespace(const std::string& ns) {
  auto r = Kubectl({"create", "namespace", ns});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

void DeleteNamespace(const std::string& ns) {
  Kubectl({"delete", "psb", "--all", "-n", ns, "--timeout=20s"});
  Kubectl({"delete", "namespace", ns, "--wait=false"});
}

void AbandonNamespace(const std::string& ns) {
  auto cfg = kube::Config::FromKubeconfig(Kubeconfig());
  if (!cfg.ok()) {
    ADD_FAILURE() << "abandoning namespace " << ns << ": " << cfg.status().ToString();
    return;
  }
  auto client = kube::Client::New(*cfg);
  if (!client.ok()) {
    ADD_FAILURE() << "abandoning namespace " << ns << ": " << client.status().ToString();
    return;
  }
  const json no_finalizers = {{"metadata", {{"finalizers", nullptr}}}};
  for (const auto& resource : {kube::resources::PubSubBackend(), kube::resources::NatsServer()}) {
    auto list = (*client)->ListAll(resource, ns);
    if (!list.ok()) {
      ADD_FAILURE() << "listing in " << ns << ": " << list.status().ToString();
      continue;
    }
    for (const auto& o : list->value("items", json::array())) {
      if (o["metadata"].value("finalizers", json::array()).empty()) continue;
      const std::string name = o["metadata"].value("name", "");
      auto r = (*client)->Patch(resource, ns, name, kube::PatchType::kMerge, no_finalizers);
      // Gone meanwhile is as good as patched.
      if (!r.ok() && r.status().code() != StatusCode::kNotFound) {
        ADD_FAILURE() << "dropping the finalizers of " << ns << "/" << name << ": "
                      << r.status().ToString();
      }
    }
  }
  Kubectl({"delete", "namespace", ns, "--wait=false"});
}

LocalNats::LocalNats() {
  port_ = testing::FreePort();
  monitor_port_ = testing::FreePort();
  dir_.WriteFile("switchboard.conf", "max_payload: 16777216\n");
  std::string conf =
      dir_.WriteFile("nats.conf", "listen: 127.0.0.1:" + std::to_string(port_) +
                                      "\nhttp: 127.0.0.1:" + std::to_string(monitor_port_) +
                                      "\ninclude \"switchboard.conf\"\n");
  testing::Process::Options o;
  o.argv = {"nats-server", "-c", conf, "-P", pid_file()};
  o.log_path = dir_.path() + "/nats.log";
  proc_ = testing::Process(o);
  ok_ = testing::WaitForPort(port_, 10s) &&
        testing::WaitFor([&] { return !testing::ReadFile(pid_file()).empty(); }, 5s);
}

LocalNats::~LocalNats() { proc_.Stop(); }

std::string LocalNats::IncludeText() const { return testing::ReadFile(include_path()); }

testing::Process StartConfigSync(const LocalNats& nats, const std::string& ns,
                                 const std::string& secret) {
  testing::Process::Options o;
  o.argv = {BinDir() + "/switchboard-config-sync",
            "--kubeconfig",
            Kubeconfig(),
            "--namespace",
            ns,
            "--secret",
            secret,
            "--file",
            nats.include_path(),
            "--pid-file",
            nats.pid_file(),
            "--monitor-url",
            nats.monitor_url(),
            "--interval",
            "100ms"};
  o.log_path = nats.dir() + "/config-sync." + ns + ".log";
  return testing::Process(o);
}

OperatorProcess::OperatorProcess(const std::vector<std::string>& namespaces,
                                 const std::vector<std::string>& extra_args) {
  health_port_ = testing::FreePort();
  metrics_port_ = testing::FreePort();
  std::string ns;
  for (const auto& n : namespaces) ns += (ns.empty() ? "" : ",") + n;
  testing::Process::Options o;
  o.argv = {BinDir() + "/switchboard-operator",
            "--kubeconfig",
            Kubeconfig(),
            "--namespaces",
            ns,
            "--health-addr",
            "127.0.0.1:" + std::to_string(health_port_),
            "--metrics-addr",
            "127.0.0.1:" + std::to_string(metrics_port_),
            "--probe-interval",
            "2s",
            "--probe-timeout",
            "2s"};
  o.argv.insert(o.argv.end(), extra_args.begin(), extra_args.end());
  o.log_path = dir_.path() + "/operator.log";
  o.env["SWITCHBOARD_LOG_LEVEL"] = "debug";
  proc_ = testing::Process(o);
}

OperatorProcess::~OperatorProcess() { proc_.Stop(10s); }

bool OperatorProcess::Healthy() {
  httplib::Client c("127.0.0.1", health_port_);
  c.set_connection_timeout(1);
  auto r = c.Get("/healthz");
  return r && r->status == 200;
}

std::string OperatorProcess::Metrics() {
  httplib::Client c("127.0.0.1", metrics_port_);
  c.set_connection_timeout(1);
  auto r = c.Get("/metrics");
  return r && r->status == 200 ? r->body : "";
}

std::string NatsServerYaml(const std::string& ns, const std::string& name, const std::string& url,
                           const std::vector<std::string>& allowed) {
  std::string y =
      "apiVersion: pubsub.switchboard.dev/v1alpha1\nkind: NatsServer\nmetadata: {name: \"" + name +
      "\", namespace: \"" + ns + "\"}\nspec:\n  url: \"" + url + "\"\n";
  if (!allowed.empty()) {
    y += "  allowedNamespaces:\n    from: List\n    names: [";
    for (size_t i = 0; i < allowed.size(); i++) y += (i ? ", \"" : "\"") + allowed[i] + "\"";
    y += "]\n";
  }
  return y;
}

std::string BackendYaml(const std::string& ns, const std::string& name,
                        const std::string& server_ns, const std::string& server,
                        const std::string& prefix) {
  auto q = [](const std::string& v) { return "\"" + v + "\""; };
  return "apiVersion: pubsub.switchboard.dev/v1alpha1\nkind: PubSubBackend\nmetadata: {name: " +
         q(name) + ", namespace: " + q(ns) +
         "}\nspec:\n  kind: nats\n  nats:\n    serverRef: {name: " + q(server) +
         ", namespace: " + q(server_ns) + "}\n    subjectPrefix: " + q(prefix) + "\n";
}

std::string CalloutServerYaml(const std::string& ns, const std::string& name,
                              const std::string& url, const std::vector<std::string>& allowed) {
  return NatsServerYaml(ns, name, url, allowed) + "  provisioning: {mode: AuthCallout}\n";
}

std::string CalloutNatsServerBinary() {
  return switchboard::testing::ToolPath("nats-server-callout");
}

AuthorizerProcess::AuthorizerProcess(const std::vector<std::string>& namespaces,
                                     const std::string& server,
                                     const std::vector<std::string>& extra) {
  port_ = testing::FreePort();
  std::string ns;
  for (const auto& n : namespaces) ns += (ns.empty() ? "" : ",") + n;
  testing::Process::Options o;
  o.argv = {BinDir() + "/switchboard-authorizer",
            "--kubeconfig",
            Kubeconfig(),
            "--namespaces",
            ns,
            "--health-addr",
            "127.0.0.1:" + std::to_string(port_),
            "--metrics-addr",
            "127.0.0.1:" + std::to_string(port_)};
  if (!server.empty()) o.argv.insert(o.argv.end(), {"--servers", server});
  o.argv.insert(o.argv.end(), extra.begin(), extra.end());
  o.log_path = dir_.path() + "/authorizer.log";
  o.env["SWITCHBOARD_LOG_LEVEL"] = "debug";
  proc_ = testing::Process(o);
}

AuthorizerProcess::~AuthorizerProcess() { proc_.Stop(10s); }

void AuthorizerProcess::Kill() {
  proc_.Signal(SIGKILL);
  proc_.Wait(10s);
}

std::string AuthorizerProcess::Get(const std::string& path) const {
  auto [status, body] = Fetch(path);
  return status == 200 ? body : "";
}

std::pair<int, std::string> AuthorizerProcess::Fetch(const std::string& path) const {
  httplib::Client c("127.0.0.1", port_);
  c.set_connection_timeout(1);
  c.set_read_timeout(5);
  auto r = c.Get(path);
  return r ? std::make_pair(r->status, r->body) : std::make_pair(0, std::string());
}

CalloutNats::CalloutNats(std::string ns, std::string name, std::vector<std::string> namespaces)
    : CalloutNats(std::move(ns), std::move(name), std::move(namespaces), Options{}) {}

CalloutNats::CalloutNats(std::string ns, std::string name, std::vector<std::string> namespaces,
                         Options options)
    : ns_(std::move(ns)),
      name_(std::move(name)),
      namespaces_(std::move(namespaces)),
      options_(std::move(options)),
      nats_(testing::NatsCluster::Options{.size = options_.size,
                                          .binary = CalloutNatsServerBinary()}) {}

CalloutNats::~CalloutNats() {
  authorizers_.clear();  // before the servers: they would only reconnect
}

std::string CalloutNats::ServerYaml(const std::vector<std::string>& allowed) const {
  if (!accounts()) return CalloutServerYaml(ns_, name_, url(), allowed);
  return NatsServerYaml(ns_, name_, url(), allowed) +
         "  isolation: Accounts\n  provisioning:\n    mode: AuthCallout\n"
         "    authCallout: {resolverDir: \"" +
         resolver_dir() + "\"}\n";
}

std::string CalloutNats::store(int i) const { return StoreDir(resolver_dir(), i); }

std::vector<std::optional<std::string>> CalloutNats::LoadTimes() const {
  return e2e::LoadTimes(nats_);
}

bool CalloutNats::StartServer(const std::string& static_config) {
  static_config_ = static_config;
  if (!nats_.Start(BodiesWithStores(static_config, resolver_dir(), nats_.size()))) {
    error_ = "nats-server-callout did not start: " + nats_.error() + "\n" + Logs();
    return false;
  }
  return true;
}

bool CalloutNats::StartServerFromSecret(std::chrono::milliseconds timeout) {
  const std::string secret = api::DefaultConfigSecretName(name_);
  std::string text;
  if (!testing::WaitFor(
          [&] {
            text = SecretData(ns_, secret)[std::string(api::kDefaultConfigKey)];
            return accounts() ? IsOperatorModeConfig(text) : IsCalloutConfig(text);
          },
          timeout, 200ms)) {
    error_ = "no static config in Secret " + ns_ + "/" + secret + ": \"" + text + "\"";
    return false;
  }
  return StartServer(text);
}

bool CalloutNats::StartAuthorizers(int count, std::chrono::milliseconds timeout) {
  const size_t first = authorizers_.size();
  for (int i = 0; i < count; i++) {
    authorizers_.push_back(std::make_unique<AuthorizerProcess>(namespaces_, ns_ + "/" + name_));
  }
  for (size_t i = first; i < authorizers_.size(); i++) {
    AuthorizerProcess& a = *authorizers_[i];
    if (!testing::WaitFor([&] { return a.Ready(); }, timeout, 100ms)) {
      error_ = "authorizer " + std::to_string(i) + " not ready:\n" + LogTail(a.Log(), 3000);
      return false;
    }
  }
  return true;
}

std::string CalloutNats::Logs(size_t tail) const {
  std::string out;
  for (int i = 0; i < nats_.size(); i++) {
    out += "nats-server-callout " + nats_.server_name(i) + " log (tail):\n" +
           LogTail(nats_.Log(i), tail) + "\n";
  }
  for (size_t i = 0; i < authorizers_.size(); i++) {
    out += "authorizer " + std::to_string(i) + " log (tail):\n" +
           LogTail(authorizers_[i]->Log(), tail) + "\n";
  }
  return out;
}

}  // namespace switchboard::e2e
