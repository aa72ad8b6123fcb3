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

#include "switchboard/common/log.h"
#include "switchboard/kube/client.h"
#include "switchboard/operator_controller/config_sync.h"
#include "switchboard/operator_controller/options.h"

namespace {

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

constexpr const char* kUsage =
    "Usage: switchboard-config-sync --namespace NS --secret NAME [--key switchboard.conf]\n"
    "         --file PATH (--pid PID | --pid-file PATH) [--kubeconfig PATH] [--interval 200ms]\n"
    "Mirrors a NatsServer's rendered config Secret key into PATH and sends SIGHUP to the\n"
    "nats-server when it changes (what the NATS Helm chart's reloader does in a cluster).\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace switchboard;
  std::string ns, secret, key = "switchboard.conf", file, pid_file, kubeconfig;
  pid_t pid = 0;
  std::chrono::milliseconds interval{200};
  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); i++) {
    std::string a = args[i], v;
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (auto eq = a.find('='); eq != std::string::npos) {
      v = a.substr(eq + 1);
      a = a.substr(0, eq);
    } else if (i + 1 < args.size()) {
      v = args[++i];
    } else {
      std::fprintf(stderr, "switchboard-config-sync: %s needs a value\n%s", a.c_str(), kUsage);
      return 2;
    }
    if (a == "--namespace")
      ns = v;
    else if (a == "--secret")
      secret = v;
    else if (a == "--key")
      key = v;
    else if (a == "--file")
      file = v;
    else if (a == "--pid-file")
      pid_file = v;
    else if (a == "--kubeconfig")
      kubeconfig = v;
    else if (a == "--pid")
      pid = static_cast<pid_t>(std::atol(v.c_str()));
    else if (a == "--interval") {
      auto d = operator_controller::ParseDuration(v);
      if (!d.ok()) {
        std::fprintf(stderr, "switchboard-config-sync: --interval: %s\n",
                     d.status().message().c_str());
        return 2;
      }
      interval = *d;
    } else {
      std::fprintf(stderr, "switchboard-config-sync: unknown flag %s\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  if (ns.empty() || secret.empty() || file.empty() || (pid <= 0 && pid_file.empty())) {
    std::fprintf(stderr,
                 "switchboard-config-sync: --namespace, --secret, --file and --pid or --pid-file "
                 "are required\n%s",
                 kUsage);
    return 2;
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
