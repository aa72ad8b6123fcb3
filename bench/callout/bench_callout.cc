// bench_callout: auth callout mode against file mode, side by side in one
// run against one API server (the targets in BENCHMARKS.md).
//
//   create -> Ready  N installations already on each server, then samples
//                    alternating between the modes: one PubSubBackend
//                    created (the POST `kubectl apply` makes for a new
//                    object), its status polled every 10 ms until Ready;
//                    p50/p99 per mode. File mode has
//                    switchboard-config-sync as the reloader (with
//                    --monitor-url, as bench_operator_controller runs it);
//                    callout mode has no reloader at all.
//   storm            every installation's engine credentials held open by
//                    the storm driver (one thread, epoll), one server
//                    stopped (SIGTERM) and started again on its ports; the
//                    time from the stop until all are authenticated again,
//                    the refusals by text, and the CPU the servers (and in
//                    callout mode the authorizers) spent. With
//                    --nats-servers N > 1 both modes run N routed servers
//                    (file mode on the include file the operator rendered,
//                    started for the storm), each connection has every
//                    server's port and moves to the next one after a drop
//                    or a refusal (as Hatchet's engine does with its server
//                    list), and the storm runs twice per mode: every
//                    connection first on the restarted server, then spread
//                    over all. Callout mode restarts the server holding the
//                    most authorizer connections. --storm-runs repeats it.
//   RSS              each authorizer's VmRSS/VmHWM with N installations.
//   reloads          the callout servers' /varz config_load_time before the
//                    installations and after the samples (callout mode
//                    never reloads).
//   NATS memory      each callout server's VmRSS before the installations
//                    and with all N installations' engines connected (one
//                    connection each): the growth per installation (in
//                    Accounts mode, an account and a connection each).
//   usage            with every engine connected, the operator's usage
//                    round (switchboard_usage_collection_seconds) once its
//                    switchboard_installation_connections count all N, and
//                    the CPU the servers and the operator spend over the
//                    next usage interval (which holds one round).
//   API floor        --floor on: after the samples, the writes of N
//                    backends from a bare client (bench/support/api_floor.h)
//                    into a namespace of their own; callout mode's all
//                    Ready over it.
//   whole restart    --whole-restart on: every installation's engine
//                    connected (Go client pacing, spread over the servers),
//                    every callout server SIGKILLed at once and, in Accounts
//                    mode, its resolver store emptied (an emptyDir), then
//                    all started again: the time until every engine is
//                    back, and (Accounts) until every store holds every
//                    account again, pushed by the operator.
//   memory at N      with all N Ready and before any engine connects, each
//                    callout server's VmRSS growth (in Accounts mode: N
//                    accounts) and each authorizer's VmRSS. --engines off
//                    stops there: no engine connects (nor NATS memory with
//                    engines, usage or whole restart), for runs at a size
//                    where N engines connecting at once is its own test.
//
// --isolation picks the callout NatsServer's spec.isolation. Permissions
// (default): every installation's user in one shared account, the
// auth_callout block in the static config. Accounts (NATS operator mode):
// an account per installation, its JWT pushed by the operator to each
// server's full resolver over the system account; the NatsServer names
// resolverDir <tmp>/resolver and each of the --nats-servers servers gets
// its own store (<tmp>/resolver-<i>) in that place in its copy of the
// config. The results then also count the account JWTs in each store.
// The storm restarts a server on its own store (what a pod keeps on a
// volume).
//
// --log-dir DIR keeps the operator's, the authorizers' and the callout
// servers' logs and the operator's /metrics after the samples in DIR (the
// rest lives in a temporary directory removed at the end).
//
// A sample slower than 2 s prints the Ready reasons it went through and
// when each was first seen (the operator's probe retries show there).
//
// Everything is real: kube-apiserver + etcd (--kubeconfig; e.g. the e2e
// fixture's build/e2e-cluster/kubeconfig), nats-server-callout (tools
// cache), switchboard-operator, switchboard-config-sync and two
// switchboard-authorizer replicas from this build.
//
//   bench_callout --kubeconfig PATH [--installations 1000] [--samples 40]
//                 [--storm on|off] [--modes both|callout] [--timeout 900]
//                 [--nats-servers 1] [--storm-runs 1]
//                 [--isolation Permissions|Accounts] [--log-dir DIR]
//                 [--floor on|off] [--whole-restart on|off] [--engines on|off]
//   (--file-mode off is --modes callout)
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench_paths.h"
#include "storm.h"
#include "switchboard/bench/api_floor.h"
#include "switchboard/common/base64.h"
#include "switchboard/kube/client.h"
#include "switchboard/kube/watcher.h"
#include "switchboard/testing/metrics_text.h"
#include "switchboard/testing/nats_cluster.h"
#include "switchboard/testing/net.h"
#include "switchboard/testing/process.h"
#include "switchboard/testing/temp_dir.h"
#include "switchboard/testing/wait.h"

using namespace std::chrono_literals;
using switchboard::kube::json;
namespace kube = switchboard::kube;
namespace testing = switchboard::testing;
namespace bench = switchboard::bench;
using Clock = std::chrono::steady_clock;

namespace {

using bench::SelfDir;
using bench::ToolsBin;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

bool IsReady(const json& o) {
  if (!o.is_object() || !o.contains("status")) return false;
  for (const auto& c : o["status"].value("conditions", json::array())) {
    if (c.value("type", "") == "Ready") return c.value("status", "") == "True";
  }
  return false;
}

// "load 1.23 0.98 0.70" (1, 5, 15 minutes).
std::string LoadAverage() {
  double l[3] = {0, 0, 0};
  if (getloadavg(l, 3) != 3) return "load ?";
  char buf[64];
  std::snprintf(buf, sizeof buf, "load %.2f %.2f %.2f", l[0], l[1], l[2]);
  return buf;
}

// Ready's reason ("" when there is no Ready condition).
std::string ReadyReason(const json& o) {
  if (!o.is_object() || !o.contains("status")) return "";
  for (const auto& c : o["status"].value("conditions", json::array())) {
    if (c.value("type", "") == "Ready") return c.value("reason", "");
  }
  return "";
}

std::string ConditionStatus(const json& o, const std::string& type) {
  if (!o.is_object() || !o.contains("status")) return "";
  for (const auto& c : o["status"].value("conditions", json::array())) {
    if (c.value("type", "") == type) return c.value("status", "");
  }
  return "";
}

json Backend(const std::string& ns, const std::string& name) {
  return {{"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
          {"kind", "PubSubBackend"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec",
           {{"kind", "nats"},
            {"nats", {{"serverRef", {{"name", "bench"}}}, {"subjectPrefix", "hatchet." + name}}}}}};
}

// Counts the Ready backends of one namespace from a watch: a LIST of every
// backend each poll would cost the API server (and this bench) far more
// than the operator's own work at 10,000 (~40 MB of JSON every poll), and
// the bench would measure itself. The cache keeps one member per backend.
class ReadyCounter {
 public:
  ReadyCounter(kube::Client* c, const std::string& ns)
      : informer_(c, kube::resources::PubSubBackend(), ns, Options()) {
    informer_.Start();
  }
  ~ReadyCounter() { informer_.Stop(); }
  int Count() {
    int n = 0;
    for (const auto& o : informer_.store().List()) {
      n += o->value("ready", false);
    }
    return n;
  }

 private:
  static kube::WatcherOptions Options() {
    kube::WatcherOptions o;
    o.transform = [](json& obj) {
      const bool ready = IsReady(obj);
      json meta = json::object();
      for (const char* k : {"name", "namespace", "resourceVersion"}) {
        if (obj["metadata"].contains(k)) meta[k] = obj["metadata"][k];
      }
      obj = {{"metadata", std::move(meta)}, {"ready", ready}};
    };
    return o;
  }
  kube::Informer informer_;
};

// Creates b0..b<n-1> from 8 threads; the number of failed creates.
int CreateMany(kube::Client& c, const std::string& ns, int n) {
  std::atomic<int> next{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; t++) {
    threads.emplace_back([&] {
      for (int i = next++; i < n; i = next++) {
        if (!c.Create(kube::resources::PubSubBackend(), Backend(ns, "b" + std::to_string(i))).ok())
          failed++;
      }
    });
  }
  for (auto& t : threads) t.join();
  return failed;
}

// Every env Secret's engine credentials in ns, each with `ports` (its
// server list, the first tried first).
std::vector<bench::StormTarget> EngineCredentials(kube::Client& c, const std::string& ns,
                                                  const std::vector<int>& ports) {
  std::vector<bench::StormTarget> out;
  auto list = c.ListAll(kube::resources::Secret(), ns);
  if (!list.ok()) return out;
  for (const auto& s : (*list)["items"]) {
    const std::string name = s["metadata"].value("name", "");
    if (name.size() < 11 || name.compare(name.size() - 11, 11, "-pubsub-env") != 0) continue;
    const json data = s.value("data", json::object());
    auto field = [&](const char* key) {
      auto v = switchboard::base64::Decode(data.value(key, ""));
      return v ? *v : std::string();
    };
    out.push_back({ports, field("SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME"),
                   field("SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD")});
  }
  return out;
}

struct Percentiles {
  double p50 = 0, p99 = 0, max = 0;
  size_t n = 0;
};
Percentiles Summarize(std::vector<double> v) {
  Percentiles p;
  p.n = v.size();
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    size_t i = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(i, v.size() - 1)];
  };
  p.p50 = at(0.50);
  p.p99 = at(0.99);
  p.max = v.back();
  return p;
}

// One mode's NATS side: the server(s) and what reloads or authorizes.
struct Mode {
  std::string name, ns;
  std::vector<double> latencies;
  double all_ready_s = 0;
  int ready = 0;
  int not_ready = 0;        // samples not Ready within 60 s
  int create_failures = 0;  // samples whose create the API refused
  std::string first_create_failure;
  std::vector<double> connect_latencies;  // create -> the env Secret authenticates
};

}  // namespace

int main(int argc, char** argv) {
  int installations = 1000, samples = 40, timeout_s = 900, nats_servers = 1, storm_runs = 1;
  bool storm_on = true, file_on = true, floor_on = false, whole_restart = false, engines_on = true;
  std::string kubeconfig, isolation = "Permissions", log_dir;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--kubeconfig") {
      kubeconfig = v;
    } else if (a == "--installations") {
      installations = std::atoi(v.c_str());
    } else if (a == "--nats-servers") {
      nats_servers = std::max(1, std::atoi(v.c_str()));
    } else if (a == "--storm-runs") {
      storm_runs = std::max(1, std::atoi(v.c_str()));
    } else if (a == "--samples") {
      samples = std::atoi(v.c_str());
    } else if (a == "--timeout") {
      timeout_s = std::atoi(v.c_str());
    } else if (a == "--storm") {
      storm_on = v == "on";
    } else if (a == "--file-mode") {
      file_on = v == "on";
    } else if (a == "--modes") {
      file_on = v != "callout";
    } else if (a == "--isolation") {
      isolation = v;
    } else if (a == "--log-dir") {
      log_dir = v;
    } else if (a == "--floor") {
      floor_on = v == "on";
    } else if (a == "--whole-restart") {
      whole_restart = v == "on";
    } else if (a == "--engines") {
      engines_on = v == "on";
    } else {
      std::fprintf(stderr, "unknown flag %s (see the header of bench_callout.cc)\n", a.c_str());
      return 2;
    }
  }
  if (kubeconfig.empty()) {
    std::fprintf(stderr, "--kubeconfig is required (e.g. build/e2e-cluster/kubeconfig)\n");
    return 2;
  }
  if (isolation != "Permissions" && isolation != "Accounts") {
    std::fprintf(stderr, "--isolation is Permissions or Accounts, not %s\n", isolation.c_str());
    return 2;
  }
  if (whole_restart && !engines_on) {
    std::fprintf(stderr, "--whole-restart on needs the engines (--engines on)\n");
    return 2;
  }
  const bool accounts = isolation == "Accounts";
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
  const std::string bin = SelfDir();
  auto config = kube::Config::FromKubeconfig(kubeconfig);
  if (!config.ok()) return 1;
  auto made = kube::Client::New(*config);
  if (!made.ok()) return 1;
  kube::Client& c = **made;

  Mode callout{.name = accounts ? "accounts" : "callout",
               .ns = "bench-callout-" + std::to_string(getpid())};
  Mode file{.name = "file", .ns = "bench-file-" + std::to_string(getpid())};
  std::vector<Mode*> modes = {&callout};
  if (file_on) modes.push_back(&file);
  for (Mode* m : modes) {
    auto r =
        c.Create(kube::resources::Namespace(),
                 {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", m->ns}}}});
    if (!r.ok()) {
      std::fprintf(stderr, "namespace %s: %s\n", m->ns.c_str(), r.status().ToString().c_str());
      return 1;
    }
  }
  testing::TempDir dir;

  // Callout mode: --nats-servers routed servers on the operator's static
  // config, two authorizers.
  testing::NatsCluster cluster({.size = nats_servers,
                                .binary = ToolsBin() + "/nats-server-callout",
                                .cluster_name = "bench"});
  std::vector<int> callout_ports;
  for (int i = 0; i < cluster.size(); i++) callout_ports.push_back(cluster.client_port(i));
  // Accounts: the resolver store the NatsServer names, and each server's own
  // store put in its place (one config body, several local processes).
  const std::string resolver_dir = dir.path() + "/resolver";
  auto store_of = [&](int i) { return resolver_dir + "-" + std::to_string(i); };
  // File mode: the include file, written by config-sync, reloaded by SIGHUP.
  const int file_port = testing::FreePort(), file_monitor = testing::FreePort();
  dir.WriteFile("switchboard.conf", "max_payload: 16777216\n");
  const std::string file_conf =
      dir.WriteFile("nats.conf", "listen: 127.0.0.1:" + std::to_string(file_port) +
                                     "\nhttp: 127.0.0.1:" + std::to_string(file_monitor) +
                                     "\ninclude \"switchboard.conf\"\n");
  auto start_file_server = [&] {
    return testing::Process(
        {{ToolsBin() + "/nats-server-callout", "-c", file_conf, "-P", dir.path() + "/nats.pid"},
         {},
         {},
         dir.path() + "/nats-file.log",
         ""});
  };
  testing::Process file_nats;
  testing::Process sync;
  if (file_on) {
    file_nats = start_file_server();
    testing::WaitForPort(file_port, 10s);
    testing::WaitFor([&] { return !testing::ReadFile(dir.path() + "/nats.pid").empty(); }, 5s);
    sync = testing::Process(
        {{bin + "/switchboard-config-sync", "--kubeconfig", kubeconfig, "--namespace", file.ns,
          "--secret", "bench-switchboard", "--file", dir.path() + "/switchboard.conf", "--pid-file",
          dir.path() + "/nats.pid", "--monitor-url",
          "http://127.0.0.1:" + std::to_string(file_monitor), "--interval", "200ms"},
         {},
         {},
         dir.path() + "/sync.log",
         ""});
  }
  std::string watched;
  for (Mode* m : modes) watched += (watched.empty() ? "" : ",") + m->ns;
  const int op_metrics = testing::FreePort();
  testing::Process op(
      {{bin + "/switchboard-operator", "--kubeconfig", kubeconfig, "--namespaces", watched,
        "--health-addr", "0", "--metrics-addr", "127.0.0.1:" + std::to_string(op_metrics),
        "--workers", "8", "--probe-interval", "10m"},
       {},
       {},
       dir.path() + "/operator.log",
       ""});
  auto server = [&](const Mode& m, const std::string& url) {
    json s = {{"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
              {"kind", "NatsServer"},
              {"metadata", {{"name", "bench"}, {"namespace", m.ns}}},
              {"spec", {{"url", url}}}};
    if (&m == &callout) {
      s["spec"]["isolation"] = isolation;
      s["spec"]["provisioning"] = {{"mode", "AuthCallout"}};
      if (accounts) s["spec"]["provisioning"]["authCallout"] = {{"resolverDir", resolver_dir}};
    }
    return c.Create(kube::resources::NatsServer(), s);
  };
  if (!server(callout, cluster.urls()).ok() ||
      (file_on && !server(file, "nats://127.0.0.1:" + std::to_string(file_port)).ok())) {
    std::fprintf(stderr, "creating the NatsServers failed\n");
    return 1;
  }
  // The static config by what only its mode's holds: the auth_callout
  // block with Permissions; with Accounts the callout is in the auth
  // account's JWT and the config has the sentinel instead.
  const std::string marker = accounts ? "default_sentinel" : "auth_callout";
  std::string body;
  testing::WaitFor(
      [&] {
        auto s = c.Get(kube::resources::Secret(), callout.ns, "bench-switchboard");
        if (!s.ok()) return false;
        auto v = switchboard::base64::Decode(
            (*s).value("data", json::object()).value("switchboard.conf", ""));
        body = v ? *v : "";
        return body.find(marker) != std::string::npos;
      },
      60s, 100ms);
  if (body.find(marker) == std::string::npos) {
    std::fprintf(stderr, "no %s in the callout config Secret:\n%s\n", marker.c_str(), body.c_str());
    return 1;
  }
  std::vector<std::string> bodies;
  const std::string quoted_dir = "\"" + resolver_dir + "\"";
  for (int i = 0; i < cluster.size(); i++) {
    std::string b = body;
    if (auto at = b.find(quoted_dir); at != std::string::npos) {
      b.replace(at, quoted_dir.size(), "\"" + store_of(i) + "\"");
    } else if (accounts) {
      std::fprintf(stderr, "the operator-mode config names no resolver dir %s\n",
                   quoted_dir.c_str());
      return 1;
    }
    bodies.push_back(std::move(b));
  }
  if (!cluster.Start(bodies)) {
    std::fprintf(stderr, "callout server: %s\n", cluster.error().c_str());
    return 1;
  }
  // The account JWTs in each server's resolver store (Accounts only).
  auto stored_accounts = [&] {
    std::string out;
    for (int i = 0; accounts && i < cluster.size(); i++) {
      int n = 0;
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(store_of(i), ec)) {
        n += e.path().extension() == ".jwt";
      }
      out += " s" + std::to_string(i + 1) + ":" + std::to_string(n);
    }
    return out.empty() ? std::string() : "; account JWTs by resolver store:" + out;
  };
  // Every server's /varz config_load_time, which moves with each reload.
  auto load_times = [&] {
    std::string out;
    for (int i = 0; i < cluster.size(); i++) {
      out += (i ? ", " : "") + cluster.ConfigLoadTime(i).value_or("?");
    }
    return out;
  };
  const std::string loaded_at = load_times();
  std::printf("start: %s; callout server isolation %s, config_load_time %s\n",
              LoadAverage().c_str(), isolation.c_str(), loaded_at.c_str());
  struct Authorizer {
    testing::Process proc;
    int health = 0;
  };
  std::vector<Authorizer> authorizers;
  for (int k = 0; k < 2; k++) {
    Authorizer a;
    a.health = testing::FreePort();
    a.proc = testing::Process(
        {{bin + "/switchboard-authorizer", "--kubeconfig", kubeconfig, "--namespaces", callout.ns,
          "--servers", callout.ns + "/bench", "--health-addr",
          "127.0.0.1:" + std::to_string(a.health), "--metrics-addr", "0"},
         {},
         {},
         dir.path() + "/authorizer-" + std::to_string(k) + ".log",
         ""});
    authorizers.push_back(std::move(a));
  }
  const bool available = testing::WaitFor(
      [&] {
        auto s = c.Get(kube::resources::NatsServer(), callout.ns, "bench");
        return s.ok() && ConditionStatus(*s, "AuthorizerAvailable") == "True";
      },
      120s, 200ms);
  if (!available) {
    std::fprintf(stderr, "the callout NatsServer never said AuthorizerAvailable=True\n");
    return 1;
  }

  // The operator's /metrics (usage, reconciles).
  auto operator_metrics = [&] {
    return testing::Run({"curl", "-s", "-m", "5",
                         "http://127.0.0.1:" + std::to_string(op_metrics) + "/metrics"},
                        {}, "", 10s)
        .out;
  };
  // Each callout server's VmRSS (KiB), before any installation.
  std::vector<long> server_rss_before;
  for (int i = 0; i < cluster.size(); i++) {
    server_rss_before.push_back(bench::ProcessStatusKb(cluster.pid(i), "VmRSS"));
  }

  // N installations on each server, one mode after the other.
  for (Mode* m : modes) {
    const auto start = Clock::now();
    ReadyCounter counter(&c, m->ns);
    const int failed = CreateMany(c, m->ns, installations);
    while (Seconds(start) < timeout_s && (m->ready = counter.Count()) < installations) {
      std::this_thread::sleep_for(500ms);
    }
    m->all_ready_s = Seconds(start);
    std::printf(
        "%-8s %d installations: all Ready after %.1f s (%d Ready, %d create failures; %s)\n",
        m->name.c_str(), installations, m->all_ready_s, m->ready, failed, LoadAverage().c_str());
    std::fflush(stdout);
    if (m == &callout) {
      // Memory with N installations and no engine yet: in Accounts mode
      // what N accounts cost each server (its store, the accounts it has
      // looked up), and what N installations cost each authorizer.
      std::string by_server;
      double grown_kib = 0;
      for (int i = 0; i < cluster.size(); i++) {
        const long now = bench::ProcessStatusKb(cluster.pid(i), "VmRSS");
        grown_kib += static_cast<double>(now - server_rss_before[i]);
        char buf[96];
        std::snprintf(buf, sizeof buf, " s%d %.1f -> %.1f MiB", i + 1,
                      server_rss_before[i] / 1024.0, now / 1024.0);
        by_server += buf;
      }
      std::string by_authorizer;
      for (size_t k = 0; k < authorizers.size(); k++) {
        char buf[96];
        std::snprintf(buf, sizeof buf, " a%zu %.1f MiB (VmHWM %.1f)", k,
                      bench::ProcessStatusKb(authorizers[k].proc.pid(), "VmRSS") / 1024.0,
                      bench::ProcessStatusKb(authorizers[k].proc.pid(), "VmHWM") / 1024.0);
        by_authorizer += buf;
      }
      std::printf(
          "%-8s with %d installations Ready, no engine yet: NATS servers' VmRSS%s (%.1f KiB per "
          "installation per server); authorizers' VmRSS%s%s\n",
          m->name.c_str(), installations, by_server.c_str(),
          grown_kib / cluster.size() / std::max(installations, 1), by_authorizer.c_str(),
          stored_accounts().c_str());
      std::fflush(stdout);
    }
    if (!engines_on) continue;
    // Every installation's env Secret authenticates (both modes), every
    // engine connecting at once and retrying as the Go client does (a 10 ms
    // retry of thousands is a flood that only measures the flood).
    auto targets =
        EngineCredentials(c, m->ns, m == &callout ? callout_ports : std::vector<int>{file_port});
    bench::Storm all(targets, bench::GoClientPacing());
    auto up = all.RunUntilAllUp(std::chrono::seconds(timeout_s));
    std::printf(
        "%-8s %d installations: %zu env Secrets, all authenticating %.1f s after the "
        "first create (%d up, %d refusals on the way; %s)%s\n",
        m->name.c_str(), installations, targets.size(), Seconds(start), up.up, up.auth_refusals,
        LoadAverage().c_str(), m == &callout ? stored_accounts().c_str() : "");
    std::fflush(stdout);
    if (m != &callout || !up.all_up) continue;
    // NATS memory with N installations, each with its engine connected.
    std::string rss_by_server;
    double grown_kib = 0;
    for (int i = 0; i < cluster.size(); i++) {
      const long now = bench::ProcessStatusKb(cluster.pid(i), "VmRSS");
      grown_kib += static_cast<double>(now - server_rss_before[i]);
      char buf[96];
      std::snprintf(buf, sizeof buf, " s%d %.1f -> %.1f MiB", i + 1, server_rss_before[i] / 1024.0,
                    now / 1024.0);
      rss_by_server += buf;
    }
    std::printf(
        "%-8s NATS servers' VmRSS before the installations and with %zu engines connected:%s; "
        "%.1f KiB per installation per server\n",
        m->name.c_str(), targets.size(), rss_by_server.c_str(),
        grown_kib / cluster.size() / static_cast<double>(std::max<size_t>(targets.size(), 1)));
    // The operator's usage round, once it counts every engine.
    const std::string in_ns = "namespace=\"" + m->ns + "\"";
    double counted = 0;
    const auto usage_wait = Clock::now();
    testing::WaitFor(
        [&] {
          counted =
              testing::MetricSum(operator_metrics(), "switchboard_installation_connections", in_ns);
          return counted >= static_cast<double>(targets.size());
        },
        120s, 1s);
    const std::string text = operator_metrics();
    const double collection_s =
        testing::MetricSum(text, "switchboard_usage_collection_seconds", in_ns);
    const double collection_errors =
        testing::MetricSum(text, "switchboard_usage_collection_errors_total", in_ns);
    // CPU over the next usage interval (the operator's interval is 30 s):
    // the servers answering the round, the operator collecting it.
    double cpu0 = bench::ProcessCpuSeconds(op.pid()), scpu0 = 0;
    for (int i = 0; i < cluster.size(); i++) scpu0 += bench::ProcessCpuSeconds(cluster.pid(i));
    const auto window = Clock::now();
    std::this_thread::sleep_for(31s);  // a measuring window, not a wait for a condition
    double scpu = -scpu0;
    for (int i = 0; i < cluster.size(); i++) scpu += bench::ProcessCpuSeconds(cluster.pid(i));
    const double ocpu = bench::ProcessCpuSeconds(op.pid()) - cpu0;
    std::printf(
        "%-8s usage with %zu engines connected: the operator counted %.0f connections %.1f s "
        "after all were up; last round %.3f s (%.0f collection errors); over %.0f s (one round): "
        "servers' CPU %.2f s, operator CPU %.2f s (%s)\n",
        m->name.c_str(), targets.size(), counted, Seconds(usage_wait), collection_s,
        collection_errors, Seconds(window), scpu, ocpu, LoadAverage().c_str());
    std::fflush(stdout);
  }
  long rss_at_n[2], hwm_at_n[2];
  for (int k = 0; k < 2; k++) {
    rss_at_n[k] = bench::ProcessStatusKb(authorizers[k].proc.pid(), "VmRSS");
    hwm_at_n[k] = bench::ProcessStatusKb(authorizers[k].proc.pid(), "VmHWM");
  }

  // create -> Ready, alternating between the modes.
  for (int s = 0; s < samples; s++) {
    for (Mode* m : modes) {
      const std::string name = "s" + std::to_string(s);
      const auto start = Clock::now();
      if (auto created = c.Create(kube::resources::PubSubBackend(), Backend(m->ns, name));
          !created.ok()) {
        if (m->create_failures++ == 0) m->first_create_failure = created.status().ToString();
        continue;
      }
      // The env Secret's credentials authenticate (what an engine needs):
      // the same measure in both modes.
      std::optional<double> connected;
      testing::WaitFor(
          [&] {
            auto env = c.Get(kube::resources::Secret(), m->ns, name + "-pubsub-env");
            if (!env.ok()) return false;
            const json data = env->value("data", json::object());
            auto field = [&](const char* key) {
              auto v = switchboard::base64::Decode(data.value(key, ""));
              return v ? *v : std::string();
            };
            bench::Storm one({{m == &callout ? callout_ports : std::vector<int>{file_port},
                               field("SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME"),
                               field("SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD")}});
            if (one.RunUntilAllUp(60s).all_up) connected = Seconds(start);
            return true;
          },
          60s, 10ms);
      if (connected) m->connect_latencies.push_back(*connected);
      // Ready's reasons as they change, with when each was first seen.
      std::string trace, last = "-";
      bool ready = testing::WaitFor(
          [&] {
            auto o = c.Get(kube::resources::PubSubBackend(), m->ns, name);
            if (!o.ok()) return false;
            const std::string reason = ReadyReason(*o);
            if (reason != last) {
              char buf[96];
              std::snprintf(buf, sizeof buf, " %.2fs:%s", Seconds(start),
                            reason.empty() ? "(none)" : reason.c_str());
              trace += buf;
              last = reason;
            }
            return IsReady(*o);
          },
          m->ready == 0 ? 0s : 60s, 10ms);
      const double took = Seconds(start);
      if (ready) {
        m->latencies.push_back(took);
      } else {
        m->not_ready++;
      }
      if (!ready || took > 2.0) {
        std::printf("%-8s sample %s: %s after %.2f s (authenticated at %s); Ready reasons:%s\n",
                    m->name.c_str(), name.c_str(), ready ? "Ready" : "not Ready", took,
                    connected ? (std::to_string(*connected) + " s").c_str() : "never",
                    trace.c_str());
        std::fflush(stdout);
      }
    }
  }
  const std::string loaded_after = load_times();
  std::string op_metrics_text;
  if (!log_dir.empty()) {
    op_metrics_text =
        testing::Run({"curl", "-s", "http://127.0.0.1:" + std::to_string(op_metrics) + "/metrics"},
                     {}, "", 10s)
            .out;
  }
  std::printf("after the samples: %s; callout server (%s) config_load_time %s (%s)%s\n",
              LoadAverage().c_str(), isolation.c_str(), loaded_after.c_str(),
              loaded_after == loaded_at ? "never reloaded" : "RELOADED", stored_accounts().c_str());
  for (Mode* m : modes) {
    auto p = Summarize(m->latencies);
    std::printf(
        "%-8s create -> Ready with %d installations: p50 %.3f s, p99 %.3f s, max %.3f s "
        "(%zu samples; %d not Ready within 60 s; %d creates refused%s%s)\n",
        m->name.c_str(), installations, p.p50, p.p99, p.max, p.n, m->not_ready, m->create_failures,
        m->create_failures ? ", first: " : "", m->first_create_failure.c_str());
  }
  for (Mode* m : modes) {
    auto p = Summarize(m->connect_latencies);
    std::printf(
        "%-8s create -> its env Secret authenticates, %d installations: p50 %.3f s, p99 %.3f s, "
        "max %.3f s (%zu samples)\n",
        m->name.c_str(), installations, p.p50, p.p99, p.max, p.n);
  }
  if (file_on) {
    auto pc = Summarize(callout.connect_latencies), pf = Summarize(file.connect_latencies);
    std::printf("create -> authenticates, file / callout: p50 %.1fx, p99 %.1fx\n", pf.p50 / pc.p50,
                pf.p99 / pc.p99);
  }
  std::fflush(stdout);

  // The API floor for N backends, beside callout mode's all Ready.
  if (floor_on) {
    const auto f = bench::RunApiFloor(c, callout.ns + "-floor", installations);
    std::printf(
        "API floor for %d backends: %.1f s (bare client, %d writes per backend incl. the create, "
        "%d failures; %s); %s all Ready / floor = %.2f\n",
        installations, f.seconds, bench::kApiFloorWritesPerBackend, f.failures,
        LoadAverage().c_str(), callout.name.c_str(), callout.all_ready_s / f.seconds);
    std::fflush(stdout);
  }

  // The reconnect storm: every installation's engine connected, server 0
  // stopped and started again on its ports (in a thread, while the driver
  // reconnects), all back.
  if (storm_on) {
    // File mode with N servers: N routed servers on the include file the
    // operator rendered (its bcrypt hashes), started for the storm.
    std::unique_ptr<testing::NatsCluster> file_cluster;
    std::vector<int> file_ports = {file_port};
    if (file_on && nats_servers > 1) {
      std::string file_body;
      auto sec = c.Get(kube::resources::Secret(), file.ns, "bench-switchboard");
      if (sec.ok()) {
        auto v = switchboard::base64::Decode(
            (*sec).value("data", json::object()).value("switchboard.conf", ""));
        file_body = v ? *v : "";
      }
      file_cluster = std::make_unique<testing::NatsCluster>(
          testing::NatsCluster::Options{.size = nats_servers,
                                        .binary = ToolsBin() + "/nats-server-callout",
                                        .cluster_name = "bench-file"});
      if (file_body.empty() || !file_cluster->Start(file_body)) {
        std::fprintf(stderr, "file-mode cluster: %s\n",
                     file_body.empty() ? "no rendered file" : file_cluster->error().c_str());
        return 1;
      }
      file_ports.clear();
      for (int i = 0; i < file_cluster->size(); i++)
        file_ports.push_back(file_cluster->client_port(i));
    }
    // One storm: server `victim` (an index into `ports`) stopped and started
    // again on its ports by this thread (the processes must be children of
    // a thread that lives on), while the driver's thread reconnects.
    // `server_pids` reads the pids in server order (the victim's changes).
    auto storm_mode = [&](const Mode& m, const std::vector<int>& ports, int victim, bool spread,
                          auto stop, auto start_again, auto server_pids,
                          const std::vector<pid_t>& authorizer_pids, const std::string& before) {
      auto targets = EngineCredentials(c, m.ns, ports);
      const size_t n = ports.size();
      for (size_t i = 0; i < targets.size(); i++) {
        auto& p = targets[i].ports;
        p.clear();
        if (spread) {
          for (size_t j = 0; j < n; j++) p.push_back(ports[(i + j) % n]);
        } else {
          // First on the victim; after it the others in a different order per
          // connection, as Go clients shuffle their server pool.
          p.push_back(ports[victim]);
          for (size_t j = 1; j < n; j++)
            p.push_back(ports[(victim + (i + j - 1) % (n - 1) + 1) % n]);
        }
      }
      const char* placement = n == 1 ? "one server" : spread ? "spread" : "all on the restarted";
      bench::Storm storm(targets);
      auto first = storm.RunUntilAllUp(300s);
      if (!first.all_up) {
        std::printf("%-8s storm (%s): only %d of %zu connected at first (%s)\n", m.name.c_str(),
                    placement, first.up, targets.size(), first.first_refusal.c_str());
        return;
      }
      const int on_victim = storm.UpByPort()[ports[victim]];
      const std::vector<pid_t> before_pids = server_pids();
      std::vector<double> cpu0;
      for (pid_t p : before_pids) cpu0.push_back(bench::ProcessCpuSeconds(p));
      for (pid_t a : authorizer_pids) cpu0.push_back(bench::ProcessCpuSeconds(a));
      const std::string load = LoadAverage();
      const auto t0 = Clock::now();
      stop();
      const double stopped_s = Seconds(t0);
      bench::StormResult again;
      double total = 0;
      int down = 0;
      std::thread driver([&] {
        down = storm.RunUntilDown(on_victim, 30s);
        again = storm.RunUntilAllUp(300s);
        total = Seconds(t0);
      });
      start_again();
      const double back_s = Seconds(t0);
      driver.join();
      const std::vector<pid_t> after_pids = server_pids();
      double server_cpu = 0, auth_cpu = 0;
      size_t k = 0;
      for (size_t j = 0; j < after_pids.size(); j++, k++) {
        server_cpu += static_cast<int>(j) == victim
                          ? bench::ProcessCpuSeconds(after_pids[j])  // a new process
                          : bench::ProcessCpuSeconds(after_pids[j]) - cpu0[k];
      }
      for (pid_t a : authorizer_pids) auth_cpu += bench::ProcessCpuSeconds(a) - cpu0[k++];
      std::string where;
      for (const auto& [port, up] : storm.UpByPort()) {
        for (size_t j = 0; j < n; j++) {
          if (ports[j] == port) where += " s" + std::to_string(j + 1) + ":" + std::to_string(up);
        }
      }
      std::printf(
          "%-8s storm (%s, %zu servers, s%d restarted, %s%s): %d on s%d, %d dropped; %d of %zu "
          "back %.2f s after the stop began (stop took %.2f s, s%d up and routed again after "
          "%.2f s); %d TCP attempts, %d refusals; up by server:%s; servers' CPU %.2f s, "
          "authorizers %.2f s (%.2f ms per dropped connection)\n",
          m.name.c_str(), placement, n, victim + 1, load.c_str(), before.c_str(), on_victim,
          victim + 1, down, again.up, targets.size(), total, stopped_s, victim + 1, back_s,
          again.attempts, again.auth_refusals, where.c_str(), server_cpu, auth_cpu,
          1000 * (server_cpu + auth_cpu) / static_cast<double>(std::max(down, 1)));
      for (const auto& [text, count] : again.refusals_by_text)
        std::printf("%-8s   %d x %s\n", m.name.c_str(), count, text.c_str());
      std::fflush(stdout);
    };
    const std::vector<pid_t> authorizer_pids = {authorizers[0].proc.pid(),
                                                authorizers[1].proc.pid()};
    auto cluster_pids = [](testing::NatsCluster& cl) {
      return [&cl] {
        std::vector<pid_t> out;
        for (int i = 0; i < cl.size(); i++) out.push_back(cl.pid(i));
        return out;
      };
    };
    // The authorizers' connections per server: the callout storm restarts
    // the server holding the most of them, the worst case for an authorizer
    // with one connection per NatsServer. With Permissions they are the
    // user switchboard-authorizer of the account SWITCHBOARD_AUTH; with
    // Accounts they authenticate with a user JWT (connz names its public
    // key) in the auth account, which is named by its public key, so they
    // are found by the connection name the authorizer sets.
    auto authorizer_connections = [&](int i) {
      auto connz = cluster.Monitor(i, accounts ? "connz?auth=true&limit=100000"
                                               : "connz?auth=true&acc=SWITCHBOARD_AUTH&limit=1000");
      int count = 0;
      if (connz.is_object()) {
        for (const auto& conn : connz.value("connections", json::array())) {
          count += accounts ? conn.value("name", "") == "switchboard-authorizer"
                            : conn.value("authorized_user", "") == "switchboard-authorizer";
        }
      }
      return count;
    };
    for (int run = 0; run < storm_runs; run++) {
      for (bool spread : {false, true}) {
        if (spread && nats_servers == 1) break;
        int victim = 0, most = -1;
        std::string before = "; authorizer connections by server:";
        for (int i = 0; i < cluster.size(); i++) {
          const int a = authorizer_connections(i);
          before += " s" + std::to_string(i + 1) + ":" + std::to_string(a);
          if (a > most) most = a, victim = i;
        }
        storm_mode(
            callout, callout_ports, victim, spread, [&] { cluster.StopServer(victim); },
            [&] { cluster.StartServer(victim); }, cluster_pids(cluster), authorizer_pids, before);
        if (!file_on) continue;
        if (file_cluster) {
          storm_mode(
              file, file_ports, 0, spread, [&] { file_cluster->StopServer(0); },
              [&] { file_cluster->StartServer(0); }, cluster_pids(*file_cluster), {}, "");
        } else {
          storm_mode(
              file, file_ports, 0, spread, [&] { file_nats.Stop(); },
              [&] {
                file_nats = start_file_server();
                testing::WaitForPort(file_port, 10s);
              },
              [&] { return std::vector<pid_t>{file_nats.pid()}; }, {}, "");
        }
      }
    }
  }

  // The whole cluster at once: every server SIGKILLed (its node gone), in
  // Accounts mode its store emptied, then all started again.
  if (whole_restart) {
    auto targets = EngineCredentials(c, callout.ns, callout_ports);
    const size_t n = callout_ports.size();
    for (size_t i = 0; i < targets.size(); i++) {
      auto& p = targets[i].ports;
      p.clear();
      for (size_t j = 0; j < n; j++) p.push_back(callout_ports[(i + j) % n]);
    }
    bench::Storm storm(targets, bench::GoClientPacing());
    const auto first = storm.RunUntilAllUp(std::chrono::seconds(timeout_s));
    // What each store held before: every installation's account and the
    // fixed ones.
    auto store_counts = [&] {
      std::vector<int> out;
      for (int i = 0; accounts && i < cluster.size(); i++) {
        int k = 0;
        std::error_code ec;
        for (const auto& e : std::filesystem::directory_iterator(store_of(i), ec)) {
          k += e.path().extension() == ".jwt";
        }
        out.push_back(k);
      }
      return out;
    };
    const std::vector<int> held = store_counts();
    if (!first.all_up) {
      std::printf("whole restart: only %d of %zu engines connected at first (%s)\n", first.up,
                  targets.size(), first.first_refusal.c_str());
    } else {
      const std::string load = LoadAverage();
      const auto t0 = Clock::now();
      for (int i = 0; i < cluster.size(); i++) cluster.KillServer(i);
      for (int i = 0; accounts && i < cluster.size(); i++) {
        std::error_code ec;
        for (const auto& e : std::filesystem::directory_iterator(store_of(i), ec)) {
          std::filesystem::remove(e.path(), ec);
        }
      }
      bench::StormResult again;
      double total = 0;
      int down = 0;
      std::thread driver([&] {
        down = storm.RunUntilDown(static_cast<int>(targets.size()), 30s);
        again = storm.RunUntilAllUp(std::chrono::seconds(timeout_s));
        total = Seconds(t0);
      });
      // Started one after another on their ports, each waiting until it is
      // routed to those already up (this thread owns the processes).
      bool started = true;
      for (int i = 0; i < cluster.size(); i++) started = cluster.StartServer(i) && started;
      const double servers_up_s = Seconds(t0);
      double stores_full_s = -1;
      if (accounts) {
        testing::WaitFor(
            [&] {
              const auto now = store_counts();
              for (size_t i = 0; i < now.size(); i++) {
                if (now[i] < held[i]) return false;
              }
              return true;
            },
            std::chrono::seconds(timeout_s), 20ms);
        stores_full_s = Seconds(t0);
      }
      driver.join();
      std::string held_text, now_text;
      for (int k : held) held_text += " " + std::to_string(k);
      for (int k : store_counts()) now_text += " " + std::to_string(k);
      std::printf(
          "%-8s whole restart (%zu servers SIGKILLed at once%s, %s): %d dropped; %d of %zu engines "
          "back %.2f s after the kill (servers started%s and routed after %.2f s)%s; %d TCP "
          "attempts, %d refusals\n",
          callout.name.c_str(), n, accounts ? ", stores emptied" : "", load.c_str(), down, again.up,
          targets.size(), total, started ? "" : " (NOT ALL)", servers_up_s,
          accounts
              ? (", every store holding its accounts again after " + std::to_string(stores_full_s) +
                 " s (JWTs by store before:" + held_text + ", after:" + now_text + ")")
                    .c_str()
              : "",
          again.attempts, again.auth_refusals);
      for (const auto& [text, count] : again.refusals_by_text)
        std::printf("%-8s   %d x %s\n", callout.name.c_str(), count, text.c_str());
      std::fflush(stdout);
    }
  }

  for (int k = 0; k < 2; k++) {
    std::printf(
        "authorizer %d RSS with %d installations: %.1f MiB (VmHWM %.1f MiB); at the end "
        "%.1f MiB\n",
        k, installations, rss_at_n[k] / 1024.0, hwm_at_n[k] / 1024.0,
        bench::ProcessStatusKb(authorizers[k].proc.pid(), "VmRSS") / 1024.0);
  }
  std::fflush(stdout);

  if (!log_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(log_dir, ec);
    std::filesystem::copy_file(dir.path() + "/operator.log", log_dir + "/operator.log",
                               std::filesystem::copy_options::overwrite_existing, ec);
    for (int k = 0; k < 2; k++) {
      const std::string name = "/authorizer-" + std::to_string(k) + ".log";
      std::filesystem::copy_file(dir.path() + name, log_dir + name,
                                 std::filesystem::copy_options::overwrite_existing, ec);
    }
    for (int i = 0; i < cluster.size(); i++) {
      std::ofstream(log_dir + "/" + cluster.server_name(i) + ".log") << cluster.Log(i);
    }
    std::ofstream(log_dir + "/operator-metrics.txt") << op_metrics_text;
  }

  // Clean up: authorizers, then the namespaces while the operator still
  // runs (its finalizers), then the operator.
  for (auto& a : authorizers) a.proc.Stop();
  for (Mode* m : modes) {
    testing::Run(
        {"kubectl", "--kubeconfig", kubeconfig, "delete", "namespace", m->ns, "--wait=false"}, {},
        "", 60s);
  }
  testing::WaitFor(
      [&] {
        for (Mode* m : modes) {
          if (c.Get(kube::resources::Namespace(), "", m->ns).ok()) return false;
        }
        return true;
      },
      300s, 500ms);
  op.Stop(10s);
  sync.Stop();
  file_nats.Stop();
  return 0;
}
