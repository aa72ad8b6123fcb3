// bench_operator_controller: N PubSubBackends on one NatsServer, from the
// first create to all Ready, and the operator's RSS then (the targets, in BENCHMARKS.md:
// 1,000 backends in <= 30 s and within 1.5x the API floor, RSS <= 30 MiB,
// a restart converged in <= 10 s with no user dropped).
//
// Also measured in the same run against the same API server:
//   writes per backend  the API server's mutating requests during the run
//                       (apiserver_request_total, kubectl get --raw /metrics)
//                       minus the bench's own creates, per backend
//   API floor           a bare client making the same kinds of writes per
//                       backend (create, JSON-patch a finalizer, create two
//                       Secrets, patch status, create an Event) from 8
//                       threads into another namespace
//   restart             SIGTERM, a new operator; time until it reconciled
//                       every backend (its metrics), the fewest users the
//                       rendered file held meanwhile (polled every 50 ms)
//
// Everything is real: kube-apiserver + etcd (scripts/cluster.sh, started
// here in <build>/bench-cluster unless --kubeconfig is given), nats-server
// including the rendered file, switchboard-config-sync, switchboard-operator.
//
//   bench_operator_controller [--backends 1000] [--workers 4] [--kubeconfig PATH]
//                             [--timeout 600]
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "switchboard/bench/api_floor.h"
#include "switchboard/kube/client.h"
#include "switchboard/testing/metrics_text.h"
#include "switchboard/testing/net.h"
#include "switchboard/testing/process.h"
#include "switchboard/testing/temp_dir.h"
#include "switchboard/testing/wait.h"

using namespace std::chrono_literals;
using switchboard::kube::json;
using switchboard::testing::MetricSum;
namespace kube = switchboard::kube;
namespace testing = switchboard::testing;

namespace {

std::string SelfDir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  std::string p(buf, n > 0 ? static_cast<size_t>(n) : 0);
  return p.substr(0, p.rfind('/'));
}

long StatusKb(pid_t pid, const char* field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) return std::atol(line.c_str() + std::strlen(field) + 1);
  }
  return -1;
}

// CPU seconds (user + system) a process has used so far.
double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = stat.rfind(')');  // the command name may hold spaces
  if (close == std::string::npos) return -1;
  std::istringstream fields(stat.substr(close + 2));
  std::string f;
  double ticks = 0;
  for (int i = 3; fields >> f && i <= 15; i++) {
    if (i == 14 || i == 15) ticks += std::atof(f.c_str());  // utime, stime
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Mutating requests the API server has served so far (all clients), by
// "VERB resource[/subresource]".
std::map<std::string, double> ApiWrites(const std::string& kubeconfig) {
  auto r = testing::Run({"kubectl", "--kubeconfig", kubeconfig, "get", "--raw", "/metrics"}, {}, "",
                        60s);
  auto label = [](const std::string& line, const std::string& name) {
    auto at = line.find(name + "=\"");
    if (at == std::string::npos) return std::string();
    at += name.size() + 2;
    return line.substr(at, line.find('"', at) - at);
  };
  std::map<std::string, double> by_kind;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("apiserver_request_total{", 0) != 0) continue;
    const std::string verb = label(line, "verb");
    if (verb != "POST" && verb != "PATCH" && verb != "PUT" && verb != "DELETE" && verb != "APPLY") {
      continue;
    }
    std::string what = verb + " " + label(line, "resource");
    if (auto sub = label(line, "subresource"); !sub.empty()) what += "/" + sub;
    by_kind[what] += std::atof(line.substr(line.rfind(' ') + 1).c_str());
  }
  return by_kind;
}

double Total(const std::map<std::string, double>& m) {
  double sum = 0;
  for (const auto& [k, v] : m) sum += v;
  return sum;
}

std::string HttpGet(int port, const std::string& path) {
  auto r = testing::Run(
      {"curl", "-s", "-m", "2", "http://127.0.0.1:" + std::to_string(port) + path}, {}, "", 5s);
  return r.exit_code == 0 ? r.out : "";
}

// "Probed 1000, AuthFailed 12" from the operator's switchboard_probe_total.
std::string ProbeCounts(const std::string& text) {
  std::string out;
  std::istringstream in(text);
  std::string line;
  const std::string prefix = "switchboard_probe_total{result=\"";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    const size_t end = line.find('"', prefix.size());
    if (end == std::string::npos) continue;
    out += (out.empty() ? "" : ", ") + line.substr(prefix.size(), end - prefix.size()) + " " +
           line.substr(line.rfind(' ') + 1);
  }
  return out.empty() ? "none" : out;
}

int CountUsers(const std::string& text) {
  int n = 0;
  for (size_t pos = 0; (pos = text.find("{user: \"", pos)) != std::string::npos; pos++) n++;
  return n;
}

int ReadyCount(kube::Client& c, const std::string& ns) {
  auto list = c.ListAll(kube::resources::PubSubBackend(), ns);
  if (!list.ok()) return -1;
  int n = 0;
  for (const auto& o : (*list)["items"]) {
    if (!o.contains("status")) continue;
    for (const auto& cond : o["status"].value("conditions", json::array())) {
      if (cond.value("type", "") == "Ready" && cond.value("status", "") == "True") n++;
    }
  }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  int backends = 1000, workers = 8, timeout_s = 600;
  std::string kubeconfig;
  bool reload_reports = true;
  for (int i = 1; i < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf(
          "usage: bench_operator_controller [--backends N] [--workers N] [--timeout SECONDS]\n"
          "                                 [--kubeconfig PATH] [--reload-reports on|off]\n"
          "Starts its own cluster and nats-server unless --kubeconfig is given.\n"
          "--reload-reports off runs config-sync without --monitor-url: the operator then\n"
          "learns that the server loaded a user only from probes (the NATS chart's reloader).\n");
      return 0;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s needs a value (try --help)\n", a.c_str());
      return 2;
    }
    if (a == "--backends")
      backends = std::atoi(argv[i + 1]);
    else if (a == "--workers")
      workers = std::atoi(argv[i + 1]);
    else if (a == "--kubeconfig")
      kubeconfig = argv[i + 1];
    else if (a == "--timeout")
      timeout_s = std::atoi(argv[i + 1]);
    else if (a == "--reload-reports" &&
             (std::string(argv[i + 1]) == "on" || std::string(argv[i + 1]) == "off"))
      reload_reports = std::string(argv[i + 1]) == "on";
    else {
      std::fprintf(stderr, "unknown flag %s\n", a.c_str());
      return 2;
    }
  }
  const std::string bin = SelfDir();
  const std::string build = bin.substr(0, bin.rfind('/'));
  const char* src_env = std::getenv("SWITCHBOARD_SOURCE_DIR");
  const std::string src = src_env ? src_env : SWITCHBOARD_SOURCE_DIR;

  // 1. Cluster.
  bool own_cluster = kubeconfig.empty();
  const std::string cluster_dir = build + "/bench-cluster";
  if (own_cluster) {
    auto r = testing::Run({"bash", src + "/scripts/cluster.sh", "up"},
                          {{"CLUSTER_DIR", cluster_dir}}, "", 600s);
    if (r.exit_code != 0) {
      std::fprintf(stderr, "cluster.sh up failed:\n%s\n", r.err.c_str());
      return 1;
    }
    kubeconfig = cluster_dir + "/kubeconfig";
  }
  auto config = kube::Config::FromKubeconfig(kubeconfig);
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.status().ToString().c_str());
    return 1;
  }
  auto client = kube::Client::New(*config);
  if (!client.ok()) return 1;
  kube::Client& c = **client;
  const std::string ns = "bench-" + std::to_string(getpid());
  auto ns_created =
      c.Create(kube::resources::Namespace(),
               {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}});
  if (!ns_created.ok()) {
    std::fprintf(stderr, "create namespace: %s\n", ns_created.status().ToString().c_str());
    return 1;
  }

  // 2. nats-server + config-sync + operator.
  testing::TempDir dir;
  int port = testing::FreePort();
  int monitor_port = testing::FreePort();
  dir.WriteFile("switchboard.conf", "max_payload: 16777216\n");
  std::string conf =
      dir.WriteFile("nats.conf", "listen: 127.0.0.1:" + std::to_string(port) +
                                     "\nhttp: 127.0.0.1:" + std::to_string(monitor_port) +
                                     "\ninclude \"switchboard.conf\"\n");
  testing::Process nats({{"nats-server", "-c", conf, "-P", dir.path() + "/nats.pid"},
                         {},
                         {},
                         dir.path() + "/nats.log",
                         ""});
  testing::WaitForPort(port, 10s);
  testing::WaitFor([&] { return !testing::ReadFile(dir.path() + "/nats.pid").empty(); }, 5s);
  std::vector<std::string> sync_argv = {bin + "/switchboard-config-sync",
                                        "--kubeconfig",
                                        kubeconfig,
                                        "--namespace",
                                        ns,
                                        "--secret",
                                        "bench-switchboard",
                                        "--file",
                                        dir.path() + "/switchboard.conf",
                                        "--pid-file",
                                        dir.path() + "/nats.pid",
                                        "--interval",
                                        "200ms"};
  if (reload_reports) {
    sync_argv.push_back("--monitor-url");
    sync_argv.push_back("http://127.0.0.1:" + std::to_string(monitor_port));
  }
  testing::Process sync({sync_argv, {}, {}, dir.path() + "/sync.log", ""});
  const int metrics_port = testing::FreePort();
  auto start_operator = [&](const std::string& log) {
    return testing::Process(
        {{bin + "/switchboard-operator", "--kubeconfig", kubeconfig, "--namespaces", ns,
          "--health-addr", "0", "--metrics-addr", "127.0.0.1:" + std::to_string(metrics_port),
          "--workers", std::to_string(workers), "--probe-interval", "10m"},
         {},
         {},
         dir.path() + "/" + log,
         ""});
  };
  testing::Process op = start_operator("operator.log");
  auto srv_created = c.Create(kube::resources::NatsServer(),
                              {{"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
                               {"kind", "NatsServer"},
                               {"metadata", {{"name", "bench"}, {"namespace", ns}}},
                               {"spec", {{"url", "nats://127.0.0.1:" + std::to_string(port)}}}});
  if (!srv_created.ok()) {
    std::fprintf(stderr, "create NatsServer: %s\n", srv_created.status().ToString().c_str());
    return 1;
  }
  long rss_idle = StatusKb(op.pid(), "VmRSS:");

  // 3. Create N backends from 8 threads; the clock starts at the first create.
  const auto writes_before = ApiWrites(kubeconfig);
  const auto start = std::chrono::steady_clock::now();
  std::atomic<int> next{0}, failed{0};
  std::vector<std::thread> creators;
  for (int t = 0; t < 8; t++) {
    creators.emplace_back([&] {
      for (int i = next++; i < backends; i = next++) {
        std::string name = "b" + std::to_string(i);
        json obj = {
            {"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
            {"kind", "PubSubBackend"},
            {"metadata", {{"name", name}, {"namespace", ns}}},
            {"spec",
             {{"kind", "nats"},
              {"nats",
               {{"serverRef", {{"name", "bench"}}}, {"subjectPrefix", "hatchet." + name}}}}}};
        if (!c.Create(kube::resources::PubSubBackend(), obj).ok()) failed++;
      }
    });
  }
  for (auto& t : creators) t.join();
  const double created_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  int ready = 0;
  long rss_peak_during = 0;
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(timeout_s)) {
    ready = ReadyCount(c, ns);
    rss_peak_during = std::max(rss_peak_during, StatusKb(op.pid(), "VmRSS:"));
    if (ready >= backends) break;
    std::this_thread::sleep_for(500ms);
  }
  const double all_ready_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  long rss = StatusKb(op.pid(), "VmRSS:");
  long hwm = StatusKb(op.pid(), "VmHWM:");
  const std::string probes = ProbeCounts(HttpGet(metrics_port, "/metrics"));
  const double cpu_s = CpuSeconds(op.pid());

  const auto writes_after = ApiWrites(kubeconfig);
  const double per_backend =
      (Total(writes_after) - Total(writes_before) - backends) / double(backends);
  std::string breakdown;  // per backend, by verb and resource
  for (const auto& [what, n] : writes_after) {
    auto b = writes_before.find(what);
    double d = (n - (b == writes_before.end() ? 0 : b->second)) / backends;
    if (d >= 0.005) breakdown += "  " + what + " " + std::to_string(d).substr(0, 4) + "\n";
  }

  // 4. The API floor: the same kinds of writes from a bare client.
  const auto api_floor = switchboard::bench::RunApiFloor(c, ns + "-floor", backends);
  const double floor_s = api_floor.seconds;
  // The operator has been idle for the floor's duration: its steady state.
  const long rss_settled = StatusKb(op.pid(), "VmRSS:");

  // 5. Restart: a new operator; how fast it has reconciled everything, and
  //    the fewest users the rendered file held meanwhile.
  op.Stop(10s);
  std::atomic<bool> polling{true};
  std::atomic<int> min_users{1 << 30};
  std::thread poller([&] {
    while (polling) {
      min_users = std::min(min_users.load(),
                           CountUsers(testing::ReadFile(dir.path() + "/switchboard.conf")));
      std::this_thread::sleep_for(50ms);
    }
  });
  const auto restart = std::chrono::steady_clock::now();
  op = start_operator("operator-restarted.log");
  testing::WaitFor(
      [&] {
        return MetricSum(HttpGet(metrics_port, "/metrics"), "switchboard_reconcile_total",
                         "kind=\"PubSubBackend\"") >= backends;
      },
      120s, 100ms);
  const double restart_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - restart).count();
  polling = false;
  poller.join();
  const int ready_after_restart = ReadyCount(c, ns);
  long rss_restarted = StatusKb(op.pid(), "VmRSS:");

  std::printf("backends            %d (create failures %d)\n", backends, failed.load());
  std::printf("workers             %d\n", workers);
  std::printf("created in          %.1f s\n", created_s);
  std::printf("all Ready after     %.1f s%s (%d Ready)\n", all_ready_s,
              ready >= backends ? "" : " (TIMEOUT)", ready);
  std::printf("operator CPU        %.1f s (user + system, start to all Ready)\n", cpu_s);
  std::printf("probes until then   %s (reload reports %s)\n", probes.c_str(),
              reload_reports ? "on" : "off");
  std::printf("writes per backend  %.2f (operator's, API server count); all clients':\n%s",
              per_backend, breakdown.c_str());
  std::printf(
      "API floor           %.1f s (bare client, 6 writes per backend incl. the create, "
      "%d failures); all Ready / floor = %.2f\n",
      floor_s, api_floor.failures, all_ready_s / floor_s);
  std::printf("operator RSS idle   %.1f MiB\n", rss_idle / 1024.0);
  std::printf("operator RSS settled %.1f MiB (all Ready, after the floor run)\n",
              rss_settled / 1024.0);
  std::printf("operator RSS then   %.1f MiB (peak %.1f MiB, VmHWM %.1f MiB)\n", rss / 1024.0,
              rss_peak_during / 1024.0, hwm / 1024.0);
  std::printf(
      "restart             reconciled all in %.1f s; fewest users in the file %d of %d; "
      "%d Ready after; RSS %.1f MiB\n",
      restart_s, min_users.load(), backends, ready_after_restart, rss_restarted / 1024.0);
  std::fflush(stdout);

  // 6. Clean up: stop the operator first (finalizers are ours to drop).
  op.Stop(10s);
  sync.Stop();
  nats.Stop();
  if (own_cluster) {
    testing::Run({"bash", src + "/scripts/cluster.sh", "down"}, {{"CLUSTER_DIR", cluster_dir}}, "",
                 120s);
  } else {
    // Without the operator nobody removes finalizers: strip them, then delete.
    auto list = c.ListAll(kube::resources::PubSubBackend(), ns);
    if (list.ok()) {
      for (const auto& o : (*list)["items"]) {
        (void)c.Patch(kube::resources::PubSubBackend(), ns, kube::NameOf(o),
                      kube::PatchType::kMerge, {{"metadata", {{"finalizers", nullptr}}}});
      }
    }
    (void)c.Delete(kube::resources::Namespace(), "", ns);
  }
  return ready >= backends ? 0 : 1;
}
