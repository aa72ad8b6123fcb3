// switchboard-operator: see operator/README.md and --help.
#include <string>
#include <vector>

#include "switchboard/common/log.h"
#include "switchboard/common/service_main.h"
#include "switchboard/common/signals.h"
#include "switchboard/operator_controller/operator.h"
#include "switchboard/operator_controller/options.h"
#include "switchboard/pubsub/nats_pubsub.h"

int main(int argc, char** argv) {
  using namespace switchboard;
  auto opts = operator_controller::ParseOptions(std::vector<std::string>(argv + 1, argv + argc));
  if (auto code = service::Preamble("switchboard-operator", opts, operator_controller::Usage))
    return *code;

  signals::BlockStopSignals();  // before any thread starts: they all inherit the mask

  operator_controller::Operator op(*opts);

  log::Info("operator", "starting",
            {{"workers", opts->workers},
             {"leaderElect", opts->leader_elect},
             {"namespaces", opts->namespaces}});
  // Run returns after a signal or by itself (an error, a lost lease).
  Status s = signals::RunUntilSignal(
      [&] { return op.Run(); },
      [&](int sig) {
        log::Info("operator", "signal received; stopping", {{"signal", sig}});
        op.Stop();
      });
  // The probes' NATS connections are all closed by now (Run joins the probe
  // workers): nats.c's threads are joined here.
  if (Status ns = pubsub::ShutdownNats(); !ns.ok()) {
    log::Warn("operator", "nats library shutdown", {{"error", ns.ToString()}});
  }
  return service::ExitCode("operator", s);
}
