// bench_authorizer_memory_offline: bench_authorizer_memory's fresh start
// without a cluster, for quick comparisons while changing the caches. An
// in-process fake API server (plain HTTP on 127.0.0.1) answers the
// authorizer's lists, in pages, with N installations as the API server
// shows them (the operator's builders plus what the server adds: uid,
// resourceVersion, creationTimestamp, managedFields, the status), and
// holds its watches open; no nats-server (the session's connection fails
// and retries, after the Directory was built). Each binary starts fresh;
// once its log says it serves N installations its VmRSS/VmHWM are read
// (after --settle). Not a substitute for bench_authorizer_memory: no watch
// event, no connection, no rebuild after a change.
//
//   bench_authorizer_memory_offline [--steps 1000,5000,10000]
//       [--binaries ENTRY,ENTRY] [--settle-ms 1000]
// ENTRY as bench_authorizer_memory's: [NAME=VALUE ...] COMMAND [ARGS].
#include <httplib.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_paths.h"
#include "switchboard/api/names.h"
#include "switchboard/kube/resource.h"
#include "switchboard/operator_logic/callout.h"
#include "switchboard/operator_logic/credentials.h"
#include "switchboard/operator_logic/env.h"
#include "switchboard/operator_logic/secrets.h"
#include "switchboard/testing/process.h"
#include "switchboard/testing/temp_dir.h"
#include "switchboard/testing/wait.h"

using namespace std::chrono_literals;
using nlohmann::json;
namespace logic = switchboard::operator_logic;
namespace testing = switchboard::testing;
namespace bench = switchboard::bench;

namespace {

constexpr const char* kNs = "bench-memory-offline";
constexpr const char* kNow = "2026-12-02T07:00:00Z";

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

using bench::Binary;
using bench::ParseBinary;

long StatusKb(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) == 0) return std::atol(line.c_str() + field.size() + 1);
  }
  return -1;
}

std::string Uid(int kind, int i) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-%04x-4%03x-8%03x-%012x", 0x5eed0000 + kind, i & 0xffff,
                i % 4096, (i * 7) % 4096, i);
  return buf;
}

// What the API server adds to an object it stores, with one managedFields
// entry per writer (`fields`: the writer's fieldsV1).
void AsStored(json& obj, const std::string& uid, int64_t rv, const json& fields) {
  json& meta = obj["metadata"];
  meta["uid"] = uid;
  meta["resourceVersion"] = std::to_string(rv);
  meta["creationTimestamp"] = kNow;
  meta["managedFields"] = json::array();
  for (const auto& [manager, f] : fields.items()) {
    meta["managedFields"].push_back({{"manager", "bench_authorizer_memory"},
                                     {"operation", "Update"},
                                     {"apiVersion", obj.value("apiVersion", "v1")},
                                     {"time", kNow},
                                     {"fieldsType", "FieldsV1"},
                                     {"fieldsV1", f}});
    if (manager == "status") meta["managedFields"].back()["subresource"] = "status";
  }
}

// fieldsV1 of every key of `obj` (one level of "f:" members per object).
json FieldsOf(const json& obj) {
  json f = json::object();
  if (!obj.is_object()) return f;
  for (const auto& [k, v] : obj.items()) {
    f["f:" + k] = v.is_object() ? FieldsOf(v) : json::object();
    if (v.is_object()) f["f:" + k]["."] = json::object();
  }
  return f;
}

struct Objects {
  std::vector<std::string> backends, secrets, servers;  // serialized items
};

void AddInstallation(Objects& out, int i, const std::string& hash) {
  const std::string name = "b" + std::to_string(i), prefix = "hatchet." + name;
  const std::string user = std::string(kNs) + "-b" + std::to_string(i);
  const std::string password = "bench-password-" + std::to_string(i) + "-0123456789abcdef";
  const std::string uid = Uid(1, i);
  json b = {{"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
            {"kind", "PubSubBackend"},
            {"metadata", {{"name", name}, {"namespace", kNs}, {"generation", 1}}},
            {"spec",
             {{"kind", "nats"},
              {"nats", {{"serverRef", {{"name", "bench"}}}, {"subjectPrefix", prefix}}}}}};
  const std::string env_name = name + "-pubsub-env";
  auto condition = [&](const char* type, const char* reason, const std::string& message) {
    return json{{"type", type},       {"status", "True"},           {"reason", reason},
                {"message", message}, {"lastTransitionTime", kNow}, {"observedGeneration", 1}};
  };
  json status = {
      {"observedGeneration", 1},
      {"conditions",
       json::array({condition("Ready", "Provisioned", "credentials authenticate on bench"),
                    condition("CredentialsReady", "Generated", "credentials Secret written"),
                    condition("ConfigRendered", "AuthorizerServes", "served by the authorizer"),
                    condition("EnvSecretReady", "Written", "env Secret " + env_name + " written"),
                    condition("Probed", "Connected", "connected as " + user)})},
      {"envSecretName", env_name},
      {"envSecretHash", "sha256:" + std::string(64, 'e')},
      {"subject", prefix + ".*"},
      {"server", std::string(kNs) + "/bench"},
      {"username", user},
      {"serverMaxPayload", 16777216},
      {"lastProbeTime", kNow}};
  json spec_fields = {{"f:spec", FieldsOf(b["spec"])}};
  b["status"] = status;
  AsStored(b, uid, 1000 + 4 * i,
           {{"spec", spec_fields}, {"status", {{"f:status", FieldsOf(status)}}}});
  out.backends.push_back(b.dump());

  logic::CredentialState state;
  state.current = {user, password, hash};
  const logic::OwnerObject owner{kNs, name, uid};
  json cred = logic::CredentialsSecret(owner, state);
  json cred_fields = FieldsOf(cred);
  cred_fields.erase("f:apiVersion");
  cred_fields.erase("f:kind");
  AsStored(cred, Uid(2, i), 1001 + 4 * i, {{"create", cred_fields}});
  out.secrets.push_back(cred.dump());
  json env = logic::EnvSecret(owner, env_name,
                              logic::NatsEnv("nats://127.0.0.1:4222", state.current.username,
                                             state.current.password, prefix));
  json env_fields = FieldsOf(env);
  env_fields.erase("f:apiVersion");
  env_fields.erase("f:kind");
  AsStored(env, Uid(3, i), 1002 + 4 * i, {{"create", env_fields}});
  out.secrets.push_back(env.dump());
}

// Pages of `items` as the API server sends them: `limit` per page, the
// page index as the continue token.
std::string Page(const std::vector<std::string>& items, const std::string& kind, size_t limit,
                 size_t page) {
  const size_t from = page * limit, to = std::min(items.size(), from + limit);
  std::string out = "{\"kind\":\"" + kind + "\",\"apiVersion\":\"v1\",\"metadata\":{";
  out += "\"resourceVersion\":\"999999\"";
  if (to < items.size()) {
    out += ",\"continue\":\"" + std::to_string(page + 1) +
           "\",\"remainingItemCount\":" + std::to_string(items.size() - to);
  }
  out += "},\"items\":[";
  for (size_t i = from; i < to; i++) {
    if (i > from) out += ',';
    out += items[i];
  }
  out += "]}";
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> steps = {1000, 5000, 10000};
  std::vector<std::string> binaries;
  int settle_ms = 1000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--steps") {
      steps.clear();
      for (const auto& s : Split(v, ',')) steps.push_back(std::atoi(s.c_str()));
    } else if (a == "--binaries") {
      // ';' separates entries when an entry needs commas (MALLOC_CONF).
      binaries = Split(v, v.find(';') != std::string::npos ? ';' : ',');
    } else if (a == "--settle-ms") {
      settle_ms = std::atoi(v.c_str());
    } else {
      std::fprintf(stderr, "unknown flag %s (see the header of this file)\n", a.c_str());
      return 2;
    }
  }
  if (binaries.empty()) binaries.push_back(bench::SelfDir() + "/switchboard-authorizer");

  const std::string hash = *logic::BcryptHash("x", 4);
  Objects objects;
  std::atomic<size_t> installations{0};
  std::mutex mu;  // guards objects

  {
    auto plan = logic::PlanCalloutKeys(std::nullopt);
    if (!plan.ok()) return 1;
    json server = {
        {"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
        {"kind", "NatsServer"},
        {"metadata", {{"name", "bench"}, {"namespace", kNs}}},
        {"spec", {{"url", "nats://127.0.0.1:1"}, {"provisioning", {{"mode", "AuthCallout"}}}}}};
    AsStored(server, Uid(0, 0), 10, {{"spec", {{"f:spec", FieldsOf(server["spec"])}}}});
    objects.servers.push_back(server.dump());
    json callout = logic::CalloutSecret({kNs, "bench", Uid(0, 0)},
                                        switchboard::api::DefaultCalloutSecretName("bench"),
                                        logic::EncodeCalloutKeys(plan->keys));
    AsStored(callout, Uid(0, 1), 11, {{"create", FieldsOf(callout)}});
    objects.secrets.push_back(callout.dump());
  }

  std::atomic<bool> stopping{false};
  httplib::Server api;
  api.new_task_queue = [] { return new httplib::ThreadPool(16); };
  api.Get(R"(/.*)", [&](const httplib::Request& req, httplib::Response& res) {
    const std::string& path = req.path;
    const std::vector<std::string>* items = nullptr;
    std::string kind;
    std::lock_guard lock(mu);
    if (path.ends_with("/pubsubbackends")) {
      items = &objects.backends;
      kind = "PubSubBackendList";
    } else if (path.ends_with("/natsservers")) {
      items = &objects.servers;
      kind = "NatsServerList";
    } else if (path.ends_with("/secrets")) {
      items = &objects.secrets;
      kind = "SecretList";
    }
    if (items == nullptr) {
      res.status = 404;
      res.set_content(R"({"kind":"Status","apiVersion":"v1","status":"Failure","code":404})",
                      "application/json");
      return;
    }
    if (req.has_param("watch")) {
      res.set_chunked_content_provider("application/json", [&](size_t, httplib::DataSink& sink) {
        while (!stopping && sink.is_writable()) std::this_thread::sleep_for(100ms);
        sink.done();
        return true;
      });
      return;
    }
    const size_t limit = req.has_param("limit") ? std::stoul(req.get_param_value("limit")) : 500;
    const size_t page = req.has_param("continue") ? std::stoul(req.get_param_value("continue")) : 0;
    res.set_content(Page(*items, kind, limit, page), "application/json");
  });
  const int port = api.bind_to_any_port("127.0.0.1");
  std::thread serve([&] { api.listen_after_bind(); });

  testing::TempDir dir;
  const std::string kubeconfig = dir.path() + "/kubeconfig";
  {
    std::ofstream kc(kubeconfig);
    kc << "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "
          "\"http://127.0.0.1:"
       << port
       << "\"}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n"
          "users:\n- name: u\n  user: {token: x}\n";
  }

  int rc = 0;
  for (int n : steps) {
    {
      std::lock_guard lock(mu);
      for (int i = static_cast<int>(installations.load()); i < n; i++) {
        AddInstallation(objects, i, hash);
      }
      installations = std::max<size_t>(installations, n);
    }
    struct Running {
      std::string label, log;
      testing::Process proc;
    };
    std::vector<Running> running;
    for (size_t k = 0; k < binaries.size(); k++) {
      const Binary b = ParseBinary(binaries[k]);
      Running r{b.label,
                dir.path() + "/authorizer-" + std::to_string(n) + "-" + std::to_string(k) + ".log",
                {}};
      std::vector<std::string> args = b.command;
      for (const std::string& a :
           {std::string("--kubeconfig"), kubeconfig, std::string("--namespaces"), std::string(kNs),
            std::string("--servers"), std::string(kNs) + "/bench", std::string("--health-addr"),
            std::string("0"), std::string("--metrics-addr"), std::string("0")}) {
        args.push_back(a);
      }
      r.proc = testing::Process({args, b.env, {}, r.log, ""});
      running.push_back(std::move(r));
    }
    const std::string serving = "\"installations\":" + std::to_string(n);
    for (auto& r : running) {
      const auto started = std::chrono::steady_clock::now();
      const bool up = testing::WaitFor(
          [&] {
            return !r.proc.running() || testing::ReadFile(r.log).find(serving) != std::string::npos;
          },
          300s, 50ms);
      if (!up || !r.proc.running()) {
        std::fprintf(stderr, "%s never logged %s; its log: %s\n", r.label.c_str(), serving.c_str(),
                     r.log.c_str());
        rc = 1;
        continue;
      }
      std::printf(
          "step %d: %s: serving after %.2f s\n", n, r.label.c_str(),
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(settle_ms));
    for (auto& r : running) {
      std::printf("step %d: %s: VmRSS %.1f MiB, VmHWM %.1f MiB\n", n, r.label.c_str(),
                  StatusKb(r.proc.pid(), "VmRSS") / 1024.0,
                  StatusKb(r.proc.pid(), "VmHWM") / 1024.0);
    }
    std::fflush(stdout);
    for (auto& r : running) r.proc.Stop();
  }
  stopping = true;
  api.stop();
  serve.join();
  return rc;
}
