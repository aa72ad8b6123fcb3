// switchboard-operator: see operator/README.md and --help.
#include <signal.h>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "switchboard/common/log.h"
#include "switchboard/operator_controller/operator.h"
#include "switchboard/operator_controller/options.h"

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
  std::thread signals([&] {
    int sig = 0;
    sigwait(&set, &sig);
    if (sig == SIGTERM || sig == SIGINT) {
      log::Info("operator", "signal received; stopping", {{"signal", sig}});
      op.Stop();
    }
  });
  signals.detach();

  log::Info("operator", "starting",
            {{"workers", opts->workers},
             {"leaderElect", opts->leader_elect},
             {"namespaces", opts->namespaces}});
  Status s = op.Run();
  if (!s.ok()) {
    log::Error("operator", "exiting", {{"error", s.ToString()}});
    return 1;
  }
  log::Info("operator", "stopped");
  return 0;
}
