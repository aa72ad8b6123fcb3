// switchboard-operator: see operator/README.md and --help.
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "switchboard/common/log.h"
#include "switchboard/operator_controller/operator.h"
#include "switchboard/operator_controller/options.h"
#include "switchboard/pubsub/nats_pubsub.h"

int main(int argc, char** argv) {
  using namespace switchboard;
  auto opts = operator_controller::ParseOptions(std::vector<std::string>(argv + 1, argv + argc));
  if (!opts.ok()) {
    std::fprintf(stderr, "switchboard-operator: %s\n", opts.status().message().c_str());
    return 2;
  }
  if (opts->help) {
    std::fputs(operator_controller::Usage().c_str(), stdout);
    return 0;
  }
  if (!opts->log_level.empty()) {
    log::Level level;
    log::ParseLevel(opts->log_level, &level);
    log::SetLevel(level);
  }

  // Signals are taken by a dedicated thread (sigwait), so no work happens in
  // a signal handler and every other thread inherits the blocked mask.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);

  operator_controller::Operator op(*opts);
  std::atomic<bool> returned{false};  // Run has returned: a SIGTERM now only ends this thread
  std::thread signals([&] {
    int sig = 0;
    sigwait(&set, &sig);
    if (returned) return;
    log::Info("operator", "signal received; stopping", {{"signal", sig}});
    op.Stop();
  });

  log::Info("operator", "starting",
            {{"workers", opts->workers},
             {"leaderElect", opts->leader_elect},
             {"namespaces", opts->namespaces}});
  Status s = op.Run();
  // Run returned by itself (lost leadership, an error) or after a signal:
  // either way the signal thread is woken and joined before main returns.
  returned = true;
  pthread_kill(signals.native_handle(), SIGTERM);
  signals.join();
  // The probes' NATS connections are all closed by now (Run joins the probe
  // workers): nats.c's threads are joined here.
  if (Status ns = pubsub::ShutdownNats(); !ns.ok()) {
    log::Warn("operator", "nats library shutdown", {{"error", ns.ToString()}});
  }
  if (!s.ok()) {
    log::Error("operator", "exiting", {{"error", s.ToString()}});
    return 1;
  }
  log::Info("operator", "stopped");
  return 0;
}
