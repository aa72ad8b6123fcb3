// switchboard-authorizer: see authorizer/README.md and --help.
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "switchboard/authorizer/authorizer.h"
#include "switchboard/common/log.h"
#include "switchboard/pubsub/nats_pubsub.h"

int main(int argc, char** argv) {
  using namespace switchboard;
  auto opts = authorizer::ParseOptions(std::vector<std::string>(argv + 1, argv + argc));
  if (!opts.ok()) {
    std::fprintf(stderr, "switchboard-authorizer: %s\n", opts.status().message().c_str());
    return 2;
  }
  if (opts->help) {
    std::fputs(authorizer::Usage().c_str(), stdout);
    return 0;
  }
  if (!opts->log_level.empty()) {
    log::Level level;
    log::ParseLevel(opts->log_level, &level);
    log::SetLevel(level);
  }

  // Signals are taken by a dedicated thread (sigwait); every other thread
  // inherits the blocked mask.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);

  authorizer::Authorizer app(*opts);
  std::atomic<bool> returned{false};
  std::thread signals([&] {
    int sig = 0;
    sigwait(&set, &sig);
    if (returned) return;
    log::Info("authorizer", "signal received; stopping", {{"signal", sig}});
    app.Stop();
  });

  log::Info("authorizer", "starting",
            {{"namespaces", opts->namespaces},
             {"servers", opts->servers},
             {"requestWorkers", opts->request_workers}});
  Status s = app.Run();
  returned = true;
  pthread_kill(signals.native_handle(), SIGTERM);
  signals.join();
  // Run closed every NATS connection: nats.c's threads are joined here.
  if (Status ns = pubsub::ShutdownNats(); !ns.ok()) {
    log::Warn("authorizer", "nats library shutdown", {{"error", ns.ToString()}});
  }
  if (!s.ok()) {
    log::Error("authorizer", "exiting", {{"error", s.ToString()}});
    return 1;
  }
  log::Info("authorizer", "stopped");
  return 0;
}
