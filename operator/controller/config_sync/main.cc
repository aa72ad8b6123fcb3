// switchboard-config-sync: plays the NATS Helm chart's config reloader for
// local runs and tests. See operator/README.md.
//
//   switchboard-config-sync --namespace NS --secret NAME [--key switchboard.conf]
//       --file PATH (--pid PID | --pid-file PATH) [--kubeconfig PATH] [--interval 200ms]
//
// Polls the Secret (a GET per interval: simple, and survives API server
// restarts without watch bookkeeping), writes data[key] to --file when it
// changed, checks it with `nats-server -t` semantics left to the server (a
// broken file on reload keeps the old config) and sends SIGHUP to the
// nats-server. Never prints the file's content (it holds password hashes).
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "switchboard/common/flags.h"
#include "switchboard/common/log.h"
#include "switchboard/kube/client.h"
#include "switchboard/operator_controller/config_sync.h"

namespace {

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

constexpr const char* kUsage =
    "Usage: switchboard-config-sync --namespace NS --secret NAME [--key switchboard.conf]\n"
    "         --file PATH (--pid PID | --pid-file PATH) [--kubeconfig PATH] [--interval 200ms]\n\n"
    "Mirrors a NatsServer's rendered config Secret key into PATH and sends SIGHUP to the\n"
    "nats-server when it changes (what the NATS Helm chart's reloader does in a cluster).";

int UsageError(const std::string& message) {
  std::fprintf(stderr,
               "switchboard-config-sync: %s\nRun 'switchboard-config-sync --help' for usage.\n",
               message.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace switchboard;
  std::string ns, secret, key = "switchboard.conf", file, pid_file, kubeconfig;
  pid_t pid = 0;
  std::chrono::milliseconds interval{200};
  flags::FlagSet set(kUsage);
  set.String("namespace", &ns, "namespace of the Secret (required)").Metavar("NS");
  set.String("secret", &secret, "name of the NatsServer's config Secret (required)")
      .Metavar("NAME");
  set.String("key", &key, "data key in the Secret (default switchboard.conf)").Metavar("KEY");
  set.String("file", &file, "file the nats-server includes (required)").Metavar("PATH");
  set.Int("pid", &pid, "nats-server process to send SIGHUP", 1);
  set.String("pid-file", &pid_file, "file holding that process id (read on every reload)")
      .Metavar("PATH");
  set.String("kubeconfig", &kubeconfig, "kubeconfig file (default $KUBECONFIG, else in-cluster)")
      .Metavar("PATH");
  set.Duration("interval", &interval, "how often to read the Secret (default 200ms)",
               std::chrono::milliseconds(1));
  if (Status s = set.Parse(std::vector<std::string>(argv + 1, argv + argc)); !s.ok()) {
    return UsageError(s.message());
  }
  if (set.help()) {
    std::fputs(set.Help().c_str(), stdout);
    return 0;
  }
  if (ns.empty() || secret.empty() || file.empty() || (pid <= 0 && pid_file.empty())) {
    return UsageError("--namespace, --secret, --file and --pid or --pid-file are required");
  }

  auto config = kube::Config::Load(kubeconfig);
  if (!config.ok()) {
    log::Error("config-sync", "cannot load kubeconfig", {{"error", config.status().ToString()}});
    return 1;
  }
  config->timeout = std::chrono::seconds(5);
  auto client = kube::Client::New(*config);
  if (!client.ok()) {
    log::Error("config-sync", "cannot build client", {{"error", client.status().ToString()}});
    return 1;
  }
  signal(SIGTERM, OnSignal);
  signal(SIGINT, OnSignal);

  log::Info("config-sync", "mirroring",
            {{"namespace", ns}, {"secret", secret}, {"key", key}, {"file", file}});
  std::string last_error;
  bool pending_reload = false;
  size_t bytes = 0;
  while (!g_stop) {
    auto obj = (*client)->Get(kube::resources::Secret(), ns, secret);
    std::string error;
    if (obj.ok()) {
      auto value = operator_controller::SecretValue(obj->dump(), key);
      if (value.ok()) {
        auto wrote = operator_controller::WriteFileIfChanged(file, *value);
        if (!wrote.ok()) {
          error = wrote.status().ToString();
        } else if (*wrote) {
          pending_reload = true;
          bytes = value->size();
        }
      } else {
        error = value.status().ToString();
      }
    } else {
      error = obj.status().ToString();
    }
    // A written file whose reload could not be signalled yet (no pid file
    // so far) is signalled on a later round.
    if (pending_reload) {
      pid_t target = pid;
      if (!pid_file.empty()) {
        auto p = operator_controller::ReadPidFile(pid_file);
        target = p.ok() ? *p : 0;
        if (!p.ok()) error = p.status().ToString();
      }
      if (target > 0 && kill(target, SIGHUP) == 0) {
        pending_reload = false;
        log::Info("config-sync", "config changed; reload signalled",
                  {{"file", file}, {"bytes", bytes}, {"pid", target}});
      } else if (target > 0) {
        error = "cannot signal nats-server pid " + std::to_string(target);
      }
    }
    if (error != last_error && !error.empty()) {
      log::Warn("config-sync", "not synced", {{"error", error}});
    }
    last_error = error;
    auto until = std::chrono::steady_clock::now() + interval;
    while (!g_stop && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  log::Info("config-sync", "stopped");
  return 0;
}
