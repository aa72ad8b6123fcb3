// bench_authorizer_memory: the authorizer's RSS with N installations on one
// NatsServer, for two authorizer binaries side by side in the same run
// (the target, <= 40 MiB at 10,000, is in BENCHMARKS.md).
//
// Against a real kube-apiserver (--kubeconfig) and one nats-server-callout
// (tools cache) on the static config RenderCalloutConfig writes, without
// the operator (which does not reach 10,000 Ready on this machine): the
// bench writes what the operator writes for each installation, with the
// operator's own builders: the PubSubBackend, a Ready status, its
// credentials Secret (CredentialsSecret) and its env Secret (EnvSecret); and
// for the server its callout Secret (PlanCalloutKeys, CalloutSecret).
//
// For each step N (--steps 1000,5000,10000) the installations are created
// up to N, then every binary (--binaries a,b: this build's
// switchboard-authorizer by default) is started fresh, and once its log says
// it serves the NatsServer with N installations (a rebuild after a
// change logs nothing, so a running process cannot say when it has all N)
// one more installation is created and authenticated through the server
// (the decision works, and every binary rebuilt once after a change), and
// after --settle-ms (the later writes may still wake a rebuild)
// VmRSS and VmHWM are read from /proc. The processes are stopped before the
// next step.
//
//   bench_authorizer_memory --kubeconfig PATH [--steps 1000,5000,10000]
//                           [--binaries ENTRY,ENTRY] [--threads 8] [--namespace NS]
//                           [--settle-ms 3000]
//
// --binaries: comma-separated entries, each run side by side. An entry is
// words separated by spaces: leading NAME=VALUE words are added to that
// binary's environment, the rest is its command, e.g.
//   --binaries "build/bin/switchboard-authorizer,MALLOC_ARENA_MAX=2
//   build/bin/switchboard-authorizer"
// (the authorizer's flags are appended); entries are separated by ';'
// instead when the list contains one (MALLOC_CONF values have commas). Default: this build's
// switchboard-authorizer.
// --namespace: use (and keep) that namespace; when it exists, the
// installations already in it count (b0 ... b<n-1>) and only the missing
// ones are created, so a second run at 10,000 does not write 40,000 objects
// again (the NatsServer's URL and callout Secret are rewritten for this
// run's nats-server). Default: a new namespace, deleted at the end.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_paths.h"
#include "storm.h"
#include "switchboard/api/constants.h"
#include "switchboard/api/names.h"
#include "switchboard/kube/client.h"
#include "switchboard/operator_logic/callout.h"
#include "switchboard/operator_logic/credentials.h"
#include "switchboard/operator_logic/env.h"
#include "switchboard/operator_logic/objects.h"
#include "switchboard/operator_logic/secrets.h"
#include "switchboard/testing/nats_cluster.h"
#include "switchboard/testing/net.h"
#include "switchboard/testing/process.h"
#include "switchboard/testing/temp_dir.h"
#include "switchboard/testing/wait.h"

using namespace std::chrono_literals;
using switchboard::kube::json;
namespace kube = switchboard::kube;
namespace logic = switchboard::operator_logic;
namespace testing = switchboard::testing;
namespace bench = switchboard::bench;
using Clock = std::chrono::steady_clock;

namespace {

using bench::SelfDir;
using bench::ToolsBin;

std::vector<std::string> Split(const std::string& s, char sep = ',') {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// One bcrypt hash for every installation: its bytes are what the caches
// hold; computing 10,000 would only slow the bench.
const std::string& Hash() {
  static const std::string h = *logic::BcryptHash("x", 4);
  return h;
}

using bench::Binary;
using bench::ParseBinary;

std::string User(const std::string& ns, int i) { return ns + "-b" + std::to_string(i); }
std::string Password(int i) { return "bench-password-" + std::to_string(i) + "-0123456789abcdef"; }

// The backend, its status and its two Secrets, as the operator leaves a
// Ready installation in AuthCallout mode. False when a write failed.
bool CreateInstallation(kube::Client& c, const std::string& ns, const std::string& url, int i) {
  const std::string name = "b" + std::to_string(i), prefix = "hatchet." + name;
  json b = {{"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
            {"kind", "PubSubBackend"},
            {"metadata", {{"name", name}, {"namespace", ns}}},
            {"spec",
             {{"kind", "nats"},
              {"nats", {{"serverRef", {{"name", "bench"}}}, {"subjectPrefix", prefix}}}}}};
  auto created = c.Create(kube::resources::PubSubBackend(), b);
  if (!created.ok()) return false;
  const std::string uid = (*created)["metadata"].value("uid", "");
  logic::CredentialState state;
  state.current = {User(ns, i), Password(i), Hash()};
  const logic::OwnerObject owner{ns, name, uid};
  if (!c.Create(kube::resources::Secret(), logic::CredentialsSecret(owner, state)).ok()) {
    return false;
  }
  const std::string env_name = name + "-pubsub-env";
  if (!c.Create(kube::resources::Secret(),
                logic::EnvSecret(
                    owner, env_name,
                    logic::NatsEnv(url, state.current.username, state.current.password, prefix)))
           .ok()) {
    return false;
  }
  json s = *created;
  const std::string now = "2026-12-02T07:00:00Z";
  auto condition = [&](const char* type, const char* reason, const std::string& message) {
    return json{{"type", type},       {"status", "True"},          {"reason", reason},
                {"message", message}, {"lastTransitionTime", now}, {"observedGeneration", 1}};
  };
  s["status"] = {
      {"observedGeneration", 1},
      {"conditions",
       json::array(
           {condition("Ready", "Provisioned", "credentials authenticate on " + ns + "/bench"),
            condition("CredentialsReady", "Generated", "credentials Secret written"),
            condition("ConfigRendered", "AuthorizerServes", "served by the authorizer"),
            condition("EnvSecretReady", "Written", "env Secret " + env_name + " written"),
            condition("Probed", "Connected", "connected as " + state.current.username)})},
      {"envSecretName", env_name},
      {"envSecretHash", "sha256:" + std::string(64, 'e')},
      {"subject", prefix + ".*"},
      {"server", ns + "/bench"},
      {"username", state.current.username},
      {"serverMaxPayload", 16777216},
      {"lastProbeTime", now}};
  return c.UpdateStatus(kube::resources::PubSubBackend(), s).ok();
}

// Credentials Secrets in `ns`: the installations a Directory holds.
int CountCredentials(kube::Client& c, const std::string& ns) {
  kube::ListOptions lo;
  lo.label_selector =
      std::string(logic::kManagedByLabel) + "=" + std::string(logic::kManagedByValue);
  auto listed = c.ListAll(kube::resources::Secret(), ns, lo);
  if (!listed.ok()) return -1;
  int n = 0;
  for (const json& s : (*listed)["items"]) {
    n += s["metadata"].value("name", "").ends_with("-nats-credentials") ? 1 : 0;
  }
  return n;
}

// Creates installations [from, to) from `threads` threads; the failures.
int CreateRange(kube::Client& c, const std::string& ns, const std::string& url, int from, int to,
                int threads) {
  std::atomic<int> next{from}, failed{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; t++) {
    pool.emplace_back([&] {
      for (int i = next++; i < to; i = next++) {
        if (!CreateInstallation(c, ns, url, i)) failed++;
      }
    });
  }
  for (auto& t : pool) t.join();
  return failed;
}

}  // namespace

int main(int argc, char** argv) {
  std::string kubeconfig;
  std::vector<int> steps = {1000, 5000, 10000};
  std::vector<std::string> binaries;
  std::string reuse_ns;
  int threads = 8;
  int settle_ms = 3000;
  int nats_servers = 1;
  for (int i = 1; i < argc; i++) {
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      std::printf(
          "bench_authorizer_memory --kubeconfig PATH [--steps 1000,5000,10000]\n"
          "    [--binaries ENTRY,ENTRY] [--threads 8] [--namespace NS]\n"
          "--binaries: entries run side by side; an entry is [NAME=VALUE ...] COMMAND [ARGS]\n"
          "  (environment words first), e.g. \"MALLOC_ARENA_MAX=2 "
          "build/bin/switchboard-authorizer\";\n"
          "  default: the switchboard-authorizer beside this binary\n"
          "--namespace: use and keep NS; installations already there are not created again\n"
          "--settle-ms: wait after the connects before reading VmRSS (default 3000)\n"
          "--nats-servers: routed nats-server-callout processes (default 1); spec.url names the\n"
          "  first only (the authorizer finds the others)\n");
      return 0;
    }
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--namespace") {
      reuse_ns = v;
    } else if (a == "--kubeconfig") {
      kubeconfig = v;
    } else if (a == "--steps") {
      steps.clear();
      for (const auto& s : Split(v)) steps.push_back(std::atoi(s.c_str()));
    } else if (a == "--binaries") {
      // ';' separates entries when an entry needs commas (MALLOC_CONF).
      binaries = Split(v, v.find(';') != std::string::npos ? ';' : ',');
    } else if (a == "--settle-ms") {
      settle_ms = std::atoi(v.c_str());
    } else if (a == "--nats-servers") {
      nats_servers = std::atoi(v.c_str());
    } else if (a == "--threads") {
      threads = std::atoi(v.c_str());
    } else {
      std::fprintf(stderr, "unknown flag %s (see the header of bench_authorizer_memory.cc)\n",
                   a.c_str());
      return 2;
    }
  }
  if (kubeconfig.empty()) {
    std::fprintf(stderr, "--kubeconfig is required\n");
    return 2;
  }
  if (binaries.empty()) binaries.push_back(SelfDir() + "/switchboard-authorizer");
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
  auto config = kube::Config::FromKubeconfig(kubeconfig);
  if (!config.ok()) return 1;
  auto made = kube::Client::New(*config);
  if (!made.ok()) return 1;
  kube::Client& c = **made;
  const std::string ns = reuse_ns.empty() ? "bench-memory-" + std::to_string(getpid()) : reuse_ns;
  const bool reused = !reuse_ns.empty() && c.Get(kube::resources::Namespace(), "", ns).ok();
  if (!reused &&
      !c.Create(kube::resources::Namespace(),
                {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}})
           .ok()) {
    std::fprintf(stderr, "namespace %s could not be created\n", ns.c_str());
    return 1;
  }
  int have = 0;
  if (reused) {
    auto listed = c.ListAll(kube::resources::PubSubBackend(), ns);
    if (!listed.ok()) return 1;
    // The next index: backends are named b0 ... in creation order (one
    // whose later writes failed still holds its name).
    for (const json& b : (*listed)["items"]) {
      const std::string name = b["metadata"].value("name", "");
      if (name.size() > 1) have = std::max(have, std::atoi(name.c_str() + 1) + 1);
    }
    std::printf("namespace %s: backends up to b%d already there\n", ns.c_str(), have - 1);
  }

  // The NatsServer, its callout Secret and a server on the static config.
  auto plan = logic::PlanCalloutKeys(std::nullopt);
  if (!plan.ok()) return 1;
  auto body = logic::RenderCalloutConfig({.server_ns = ns,
                                          .server_name = "bench",
                                          .issuer = plan->keys.issuer,
                                          .authorizer_bcrypt = plan->keys.authorizer.bcrypt,
                                          .system_bcrypt = plan->keys.system.bcrypt});
  if (!body.ok()) return 1;
  testing::NatsCluster cluster({.size = nats_servers,
                                .binary = ToolsBin() + "/nats-server-callout",
                                .cluster_name = "bench"});
  if (!cluster.Start(*body)) {
    std::fprintf(stderr, "nats-server: %s\n", cluster.error().c_str());
    return 1;
  }
  const json server_object = {
      {"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
      {"kind", "NatsServer"},
      {"metadata", {{"name", "bench"}, {"namespace", ns}}},
      {"spec", {{"url", cluster.url(0)}, {"provisioning", {{"mode", "AuthCallout"}}}}}};
  auto server = c.Get(kube::resources::NatsServer(), ns, "bench");
  if (server.ok()) {
    json updated = *server;
    updated["spec"] = server_object["spec"];
    server = c.Update(kube::resources::NatsServer(), updated);
  } else {
    server = c.Create(kube::resources::NatsServer(), server_object);
  }
  if (!server.ok()) return 1;
  const logic::OwnerObject server_owner{ns, "bench", (*server)["metadata"].value("uid", "")};
  const std::string callout_name = switchboard::api::DefaultCalloutSecretName("bench");
  json callout =
      logic::CalloutSecret(server_owner, callout_name, logic::EncodeCalloutKeys(plan->keys));
  if (auto old = c.Get(kube::resources::Secret(), ns, callout_name); old.ok()) {
    callout["metadata"]["resourceVersion"] = (*old)["metadata"]["resourceVersion"];
    if (!c.Update(kube::resources::Secret(), callout).ok()) return 1;
  } else if (!c.Create(kube::resources::Secret(), callout).ok()) {
    return 1;
  }

  testing::TempDir dir;
  for (int n : steps) {
    const auto start = Clock::now();
    const int failed = CreateRange(c, ns, cluster.urls(), have, n, threads);
    std::printf("step %d: created %d installations in %.1f s (%d failed writes)\n", n,
                std::max(0, n - have), Seconds(start), failed);
    std::fflush(stdout);
    have = std::max(have, n);
    struct Running {
      std::string binary, log;
      testing::Process proc;
    };
    std::vector<Running> running;
    for (size_t k = 0; k < binaries.size(); k++) {
      const Binary b = ParseBinary(binaries[k]);
      Running r{b.label,
                dir.path() + "/authorizer-" + std::to_string(n) + "-" + std::to_string(k) + ".log",
                {}};
      std::vector<std::string> argv = b.command;
      for (const char* a :
           {"--kubeconfig", kubeconfig.c_str(), "--namespaces", ns.c_str(), "--servers"}) {
        argv.emplace_back(a);
      }
      for (const std::string& a : {ns + "/bench", std::string("--health-addr"), std::string("0"),
                                   std::string("--metrics-addr"), std::string("0")}) {
        argv.push_back(a);
      }
      r.proc = testing::Process({argv, b.env, {}, r.log, ""});
      running.push_back(std::move(r));
    }
    // The Directory holds every backend with its credentials Secret; a
    // write that failed under load may have left one without.
    const int installed = CountCredentials(c, ns);
    const std::string serving = "\"installations\":" + std::to_string(installed);
    for (auto& r : running) {
      const bool up = testing::WaitFor(
          [&] {
            return !r.proc.running() || testing::ReadFile(r.log).find(serving) != std::string::npos;
          },
          300s, 200ms);
      if (!up || !r.proc.running()) {
        std::fprintf(stderr, "%s never logged %s; its log: %s\n", r.binary.c_str(), serving.c_str(),
                     r.log.c_str());
        return 1;
      }
    }
    // One more installation: every process rebuilds after a change, and its
    // credentials authenticate through the server (a callout decision).
    // One retry under a new name when a write failed (a loaded API server).
    int extra = have++;
    bool created = CreateInstallation(c, ns, cluster.urls(), extra);
    if (!created) {
      extra = have++;
      created = CreateInstallation(c, ns, cluster.urls(), extra);
    }
    std::vector<bench::StormTarget> target(
        4,
        {.ports = {cluster.client_port(0)}, .user = User(ns, extra), .password = Password(extra)});
    bench::Storm connect(target);
    auto up = connect.RunUntilAllUp(60s);
    std::printf(
        "step %d: installation %d created %s, %d of 4 connects authenticated (%d refusals%s%s)\n",
        n, extra, created ? "ok" : "FAILED", up.up, up.auth_refusals,
        up.first_refusal.empty() ? "" : ": ", up.first_refusal.c_str());
    // The writes after the credentials Secret (the env Secret, the status)
    // may still wake a rebuild; read the steady state after it.
    std::this_thread::sleep_for(std::chrono::milliseconds(settle_ms));
    for (auto& r : running) {
      std::printf("step %d (%d installations): %s: VmRSS %.1f MiB, VmHWM %.1f MiB, %ld threads\n",
                  n, installed + (created ? 1 : 0), r.binary.c_str(),
                  bench::ProcessStatusKb(r.proc.pid(), "VmRSS") / 1024.0,
                  bench::ProcessStatusKb(r.proc.pid(), "VmHWM") / 1024.0,
                  bench::ProcessStatusKb(r.proc.pid(), "Threads"));
    }
    // Every binary's connections together, server by server.
    std::printf("step %d: authorizer connections per server (auth account):", n);
    for (int i = 0; i < cluster.size(); i++) {
      json connz =
          cluster.Monitor(i, "connz?acc=" + std::string(switchboard::api::kCalloutAuthAccount));
      std::printf(" %d", connz.is_object() ? connz.value("num_connections", -1) : -1);
    }
    std::printf("\n");
    std::fflush(stdout);
    for (auto& r : running) r.proc.Stop();
  }
  if (reuse_ns.empty() && !c.Delete(kube::resources::Namespace(), "", ns).ok()) {
    std::fprintf(stderr, "namespace %s was not deleted\n", ns.c_str());
  }
  return 0;
}
