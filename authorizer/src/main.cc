// switchboard-authorizer: see authorizer/README.md and --help.
#include <string>
#include <vector>

#include "switchboard/authorizer/authorizer.h"
#include "switchboard/common/log.h"
#include "switchboard/common/service_main.h"
#include "switchboard/common/signals.h"
#include "switchboard/pubsub/nats_pubsub.h"

int main(int argc, char** argv) {
  using namespace switchboard;
  auto opts = authorizer::ParseOptions(std::vector<std::string>(argv + 1, argv + argc));
  if (auto code = service::Preamble("switchboard-authorizer", opts, authorizer::Usage))
    return *code;

  signals::BlockStopSignals();  // before any thread starts: they all inherit the mask

  authorizer::Authorizer app(*opts);

  log::Info("authorizer", "starting",
            {{"namespaces", opts->namespaces},
             {"servers", opts->servers},
             {"requestWorkers", opts->request_workers}});
  // Run returns after a signal or by itself (an error).
  Status s = signals::RunUntilSignal(
      [&] { return app.Run(); },
      [&](int sig) {
        log::Info("authorizer", "signal received; stopping", {{"signal", sig}});
        app.Stop();
      });
  // Run closed every NATS connection: nats.c's threads are joined here.
  if (Status ns = pubsub::ShutdownNats(); !ns.ok()) {
    log::Warn("authorizer", "nats library shutdown", {{"error", ns.ToString()}});
  }
  return service::ExitCode("authorizer", s);
}
