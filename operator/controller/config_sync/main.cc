// switchboard-config-sync: plays the NATS Helm chart's config reloader for
// local runs and tests. See operator/README.md.
//
//   switchboard-config-sync --namespace NS --secret NAME [--key switchboard.conf]
//       --file PATH (--pid PID | --pid-file PATH) [--monitor-url URL]
//       [--kubeconfig PATH] [--interval 200ms]
//
// Polls the Secret (a GET per interval: simple, and survives API server
// restarts without watch bookkeeping), writes data[key] to --file when it
// changed and sends SIGHUP to the nats-server (a broken file is refused by
// the server, which keeps the old config). With --monitor-url it waits for
// /varz to show the reload, then reports the loaded content's hash on the
// Secret (api::kLoadedConfigHashAnnotation); a newer content is written only
// after that, so a report never names content the server may not have read.
// Never prints the file's content (it holds password hashes).
#include <httplib.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "switchboard/api/constants.h"
#include "switchboard/common/flags.h"
#include "switchboard/common/log.h"
#include "switchboard/kube/client.h"
#include "switchboard/operator_controller/config_sync.h"
#include "switchboard/operator_logic/render.h"

namespace {

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

constexpr const char* kUsage =
    "Usage: switchboard-config-sync --namespace NS --secret NAME [--key switchboard.conf]\n"
    "         --file PATH (--pid PID | --pid-file PATH) [--monitor-url URL]\n"
    "         [--kubeconfig PATH] [--interval 200ms]\n\n"
    "Mirrors a NatsServer's rendered config Secret key into PATH and sends SIGHUP to the\n"
    "nats-server when it changes (what the NATS Helm chart's reloader does in a cluster).\n"
    "With --monitor-url it reports each reload it saw in /varz on the Secret, so the\n"
    "operator probes a new user once the server has it.";

// How long a signalled reload may take to show in /varz before it is given
// up (the server refused the file, or is gone): nothing is reported then.
constexpr std::chrono::seconds kReloadConfirmTimeout{10};

struct AwaitedReload {
  std::string hash;         // ConfigHash of the content written
  std::string load_before;  // /varz config_load_time before the signal
  std::chrono::steady_clock::time_point deadline;
};

int UsageError(const std::string& message) {
  std::fprintf(stderr,
               "switchboard-config-sync: %s\nRun 'switchboard-config-sync --help' for usage.\n",
               message.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace switchboard;
  std::string ns, secret, key = "switchboard.conf", file, pid_file, kubeconfig, monitor_url;
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
  set.String("monitor-url", &monitor_url,
             "the nats-server's monitoring endpoint (http://HOST:PORT); reloads are then "
             "confirmed and reported on the Secret")
      .Metavar("URL");
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

  std::unique_ptr<httplib::Client> monitor;
  if (!monitor_url.empty()) {
    monitor = std::make_unique<httplib::Client>(monitor_url);
    if (!monitor->is_valid()) return UsageError("--monitor-url " + monitor_url + " is not a URL");
    monitor->set_connection_timeout(std::chrono::seconds(2));
    monitor->set_read_timeout(std::chrono::seconds(2));
  }
  auto load_time = [&]() -> Result<std::string> {
    auto r = monitor->Get("/varz");
    if (!r) {
      return Status::Unavailable("cannot read " + monitor_url +
                                 "/varz: " + httplib::to_string(r.error()));
    }
    if (r->status != 200) {
      return Status::Unavailable(monitor_url + "/varz answered " + std::to_string(r->status));
    }
    return operator_controller::VarzConfigLoadTime(r->body);
  };
  const std::string annotation(api::kLoadedConfigHashAnnotation);

  log::Info("config-sync", "mirroring",
            {{"namespace", ns},
             {"secret", secret},
             {"key", key},
             {"file", file},
             {"reports", monitor ? "yes" : "no"}});
  std::string last_error;
  bool pending_reload = false;
  size_t bytes = 0;
  std::string written_hash;
  std::optional<AwaitedReload> awaited;
  while (!g_stop) {
    auto obj = (*client)->Get(kube::resources::Secret(), ns, secret);
    std::string error;
    if (!obj.ok()) {
      error = obj.status().ToString();
    } else if (!awaited) {
      auto value = operator_controller::SecretValue(obj->dump(), key);
      if (value.ok()) {
        auto wrote = operator_controller::WriteFileIfChanged(file, *value);
        if (!wrote.ok()) {
          error = wrote.status().ToString();
        } else if (*wrote) {
          pending_reload = true;
          bytes = value->size();
          written_hash = operator_logic::ConfigHash(*value);
        }
      } else {
        error = value.status().ToString();
      }
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
      std::optional<std::string> before;
      if (monitor && target > 0) {
        auto t = load_time();
        if (t.ok()) {
          before = *t;
        } else {
          error = t.status().ToString();  // this reload goes unreported
        }
      }
      if (target > 0 && kill(target, SIGHUP) == 0) {
        pending_reload = false;
        log::Info("config-sync", "config changed; reload signalled",
                  {{"file", file}, {"bytes", bytes}, {"pid", target}, {"hash", written_hash}});
        if (before) {
          awaited = AwaitedReload{written_hash, *before,
                                  std::chrono::steady_clock::now() + kReloadConfirmTimeout};
        }
      } else if (target > 0) {
        error = "cannot signal nats-server pid " + std::to_string(target);
      }
    }
    if (awaited) {
      auto t = load_time();
      if (t.ok() && *t != awaited->load_before) {
        nlohmann::json patch = {{"metadata", {{"annotations", {{annotation, awaited->hash}}}}}};
        auto p =
            (*client)->Patch(kube::resources::Secret(), ns, secret, kube::PatchType::kMerge, patch);
        if (p.ok()) {
          log::Info("config-sync", "reload confirmed; reported on the Secret",
                    {{"hash", awaited->hash}, {"config_load_time", *t}});
          awaited.reset();
        } else {
          error = p.status().ToString();
        }
      } else if (std::chrono::steady_clock::now() >= awaited->deadline) {
        log::Warn("config-sync", "reload not seen in /varz; not reported",
                  {{"hash", awaited->hash},
                   {"waited_s", static_cast<int64_t>(kReloadConfirmTimeout.count())},
                   {"hint", "the server may have refused the file: see its log"}});
        awaited.reset();
      } else if (!t.ok()) {
        error = t.status().ToString();
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
