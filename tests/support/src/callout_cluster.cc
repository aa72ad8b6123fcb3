#include "switchboard/testing/callout_cluster.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "switchboard/kube/config.h"
#include "switchboard/kube/resource.h"
#include "switchboard/testing/tool_path.h"
#include "switchboard/testing/wait.h"

namespace switchboard::e2e {

using namespace std::chrono_literals;

json ConditionOf(const json& obj, const std::string& type) {
  if (!obj.is_object() || !obj.contains("status")) return json::object();
  for (const auto& c : obj["status"].value("conditions", json::array())) {
    if (c.value("type", "") == type) return c;
  }
  return json::object();
}

EngineProcess::EngineProcess(const std::string& log_path, const std::string& backend,
                             const std::map<std::string, std::string>& env)
    : backend_(backend), log_(log_path) {
  testing::Process::Options o;
  o.argv = {BinDir() + "/switchboard", "pubsub", "sub", "--topic", "engine"};
  o.env = env;
  o.log_path = log_;
  proc_ = testing::Process(o);
}

EngineProcess::~EngineProcess() { proc_.Stop(); }

bool EngineProcess::Subscribed() const { return Log().find("subscribed to") != std::string::npos; }

bool EngineProcess::GaveUp() const {
  return Log().find("NATS connection closed") != std::string::npos;
}

void CalloutClusterE2E::SetUp() {
  ASSERT_FALSE(Kubeconfig().empty()) << "run through ctest (fixture cluster)";
  const std::string tool = CalloutNatsServerBinary();
  ASSERT_EQ(access(tool.c_str(), X_OK), 0) << tool << " is missing (make tools)";
  ASSERT_EQ(access((BinDir() + "/switchboard-authorizer").c_str(), X_OK), 0)
      << "build switchboard-authorizer first";
  auto cfg = kube::Config::FromKubeconfig(Kubeconfig());
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  auto c = kube::Client::New(*cfg);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  client = std::move(c).value();
  ns = UniqueName("callout");
  CreateNamespace(ns);
  cluster = std::make_unique<testing::NatsCluster>(
      testing::NatsCluster::Options{.size = 3, .binary = tool});
}

void CalloutClusterE2E::TearDown() {
  // SWITCHBOARD_E2E_LOG_DIR: every log of the test, whole, into that
  // folder (the tails below are cut short).
  if (const char* dir = std::getenv("SWITCHBOARD_E2E_LOG_DIR"); dir && *dir) {
    const std::string base = std::string(dir) + "/" + ns;
    std::filesystem::create_directories(base);
    auto keep = [&](const std::string& name, const std::string& text) {
      std::ofstream(base + "/" + name) << text;
    };
    if (op) keep("operator.log", op->Log());
    for (size_t i = 0; i < authorizers.size(); i++) {
      if (authorizers[i]) keep("authorizer-" + std::to_string(i) + ".log", authorizers[i]->Log());
    }
    for (size_t i = 0; i < engines.size(); i++) {
      keep("engine-" + engines[i]->backend() + "-" + std::to_string(i) + ".log", engines[i]->Log());
    }
    for (int i = 0; cluster && i < cluster->size(); i++) {
      keep(cluster->server_name(i) + ".log", cluster->Log(i));
    }
  }
  if (HasFailure()) {
    if (op) std::cerr << "operator log (tail):\n" << LogTail(op->Log()) << "\n";
    for (auto& e : engines) {
      if (e)
        std::cerr << e->backend() << "'s engine log (tail):\n" << LogTail(e->Log(), 1500) << "\n";
    }
    for (auto& a : authorizers) {
      if (a) std::cerr << "authorizer log (tail):\n" << LogTail(a->Log(), 3000) << "\n";
    }
    for (int i = 0; cluster && i < cluster->size(); i++) {
      std::cerr << cluster->server_name(i) << " log (tail):\n"
                << LogTail(cluster->Log(i), 2000) << "\n";
    }
  }
  engines.clear();
  authorizers.clear();
  op.reset();
  if (!ns.empty()) AbandonNamespace(ns);
  cluster.reset();
}

std::string CalloutClusterE2E::ServerYaml(const ServerSpec& spec) const {
  std::string y =
      "apiVersion: pubsub.switchboard.dev/v1alpha1\nkind: NatsServer\nmetadata: {name: " +
      std::string(kServer) + ", namespace: \"" + ns + "\"}\nspec:\n  url: \"" + cluster->urls() +
      "\"\n  isolation: " + spec.isolation + "\n  provisioning:\n    mode: " + spec.mode + "\n";
  if (spec.mode == "AuthCallout") {
    y += "    authCallout: {account: " + std::string(kAccount);
    if (spec.isolation == "Accounts") y += ", resolverDir: \"" + ResolverDir() + "\"";
    y += "}\n";
  }
  return y;
}

std::string CalloutClusterE2E::ConfigBody() const {
  return SecretData(ns, std::string(kServer) + "-switchboard")["switchboard.conf"];
}

std::string CalloutClusterE2E::WaitConfigBody(const std::function<bool(const std::string&)>& ready,
                                              const std::string& what,
                                              std::chrono::milliseconds timeout) {
  std::string body;
  if (!testing::WaitFor([&] { return ready(body = ConfigBody()); }, timeout, 200ms)) {
    ADD_FAILURE() << "no " << what << " in the config Secret:\n"
                  << body << "\n"
                  << Server().dump(2);
    return "";
  }
  return body;
}

std::vector<std::string> CalloutClusterE2E::Bodies(const std::string& body) const {
  return BodiesWithStores(body, ResolverDir(), cluster->size());
}

bool CalloutClusterE2E::EveryStoreHolds(const std::string& account) const {
  for (int i = 0; i < cluster->size(); i++) {
    if (!StoreHolds(StoreOf(i), account)) return false;
  }
  return true;
}

bool CalloutClusterE2E::NoStoreHolds(const std::string& account) const {
  for (int i = 0; i < cluster->size(); i++) {
    if (StoreHolds(StoreOf(i), account)) return false;
  }
  return true;
}

void CalloutClusterE2E::StartNats(const std::string& body) {
  ASSERT_FALSE(body.empty());
  ASSERT_TRUE(cluster->Start(Bodies(body))) << cluster->error();
}

void CalloutClusterE2E::RollingRestart(const std::string& body,
                                       const std::function<void(int)>& after_each) {
  ASSERT_FALSE(body.empty());
  ASSERT_TRUE(cluster->SetConfigBodies(Bodies(body))) << cluster->error();
  for (int i = 0; i < cluster->size(); i++) {
    ASSERT_TRUE(cluster->RestartServer(i)) << cluster->error();
    if (after_each) after_each(i);
  }
}

std::multiset<std::string> CalloutClusterE2E::AccountsOf(const std::string& user) const {
  std::multiset<std::string> out;
  for (const auto& c : Clients()) {
    if (c.user == user) out.insert(c.account);
  }
  return out;
}

void CalloutClusterE2E::StartOperator(const std::vector<std::string>& extra) {
  op = std::make_unique<OperatorProcess>(std::vector<std::string>{ns}, extra);
}

std::unique_ptr<AuthorizerProcess> CalloutClusterE2E::NewAuthorizer() const {
  return std::make_unique<AuthorizerProcess>(std::vector<std::string>{ns},
                                             ns + "/" + std::string(kServer));
}

void CalloutClusterE2E::StartAuthorizers(int count, bool wait_ready) {
  const size_t first = authorizers.size();
  for (int i = 0; i < count; i++) authorizers.push_back(NewAuthorizer());
  for (size_t i = first; wait_ready && i < authorizers.size(); i++) {
    AuthorizerProcess& a = *authorizers[i];
    ASSERT_TRUE(testing::WaitFor([&] { return a.Ready(); }, 60s, 100ms)) << LogTail(a.Log());
  }
}

void CalloutClusterE2E::CreateBackend(const std::string& name, const json& limits) {
  json nats = {{"serverRef", {{"name", kServer}}}, {"subjectPrefix", Prefix(name)}};
  if (limits.is_object()) nats["limits"] = limits;
  json b = {{"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
            {"kind", "PubSubBackend"},
            {"metadata", {{"name", name}, {"namespace", ns}}},
            {"spec", {{"kind", "nats"}, {"nats", nats}}}};
  auto r = client->Create(kube::resources::PubSubBackend(), b);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
}

std::vector<json> CalloutClusterE2E::ListBackends() const {
  auto list = client->ListAll(kube::resources::PubSubBackend(), ns);
  if (!list.ok()) return {};
  return (*list)["items"].get<std::vector<json>>();
}

int CalloutClusterE2E::ReadyCount() const {
  int ready = 0;
  for (const auto& b : ListBackends()) {
    ready += ConditionOf(b, "Ready").value("status", "") == "True" ? 1 : 0;
  }
  return ready;
}

std::map<std::string, std::string> CalloutClusterE2E::Env(const std::string& backend) const {
  return SecretData(ns, backend + "-pubsub-env");
}

std::map<std::string, std::string> CalloutClusterE2E::EnvAt(const std::string& backend,
                                                            int server) const {
  return WithUrl(Env(backend), cluster->url(server));
}

std::map<std::string, std::string> CalloutClusterE2E::WithUrl(
    std::map<std::string, std::string> env, const std::string& url) {
  env["SERVER_MSGQUEUE_PUBSUB_NATS_URL"] = url;
  return env;
}

std::string CalloutClusterE2E::User(const std::string& backend) const {
  return Env(backend)["SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME"];
}

testing::RunResult CalloutClusterE2E::Cli(const std::vector<std::string>& args,
                                          const std::map<std::string, std::string>& env) {
  std::vector<std::string> argv = {BinDir() + "/switchboard", "pubsub"};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::Run(argv, env, "", 60s);
}

testing::RunResult CalloutClusterE2E::Publish(const std::map<std::string, std::string>& env,
                                              const std::string& topic) {
  return Cli({"pub", "--topic", topic, "{}"}, env);
}

std::string CalloutClusterE2E::NextEngineLog(const std::string& backend) {
  return engine_dir.path() + "/engine-" + backend + "-" + std::to_string(engines_started_++) +
         ".log";
}

EngineProcess& CalloutClusterE2E::StartEngine(const std::string& backend,
                                              const std::map<std::string, std::string>& env) {
  auto it = env.find("SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME");
  engine_user[backend] = it == env.end() ? "" : it->second;
  engines.push_back(std::make_unique<EngineProcess>(NextEngineLog(backend), backend, env));
  return *engines.back();
}

EngineProcess& CalloutClusterE2E::RestartEngine(size_t i,
                                                const std::map<std::string, std::string>& env) {
  const std::string backend = engines.at(i)->backend();
  auto it = env.find("SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME");
  engine_user[backend] = it == env.end() ? "" : it->second;
  engines[i].reset();  // the old one stops before the new one connects
  engines[i] = std::make_unique<EngineProcess>(NextEngineLog(backend), backend, env);
  return *engines[i];
}

void CalloutClusterE2E::WaitEnginesSubscribed(std::chrono::milliseconds timeout) {
  for (auto& e : engines) {
    ASSERT_TRUE(testing::WaitFor([&] { return e->Subscribed(); }, timeout)) << e->Log();
  }
}

}  // namespace switchboard::e2e
