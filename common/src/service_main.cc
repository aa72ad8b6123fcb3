#include "switchboard/common/service_main.h"

namespace switchboard::service {

bool ApplyLogLevel(const std::string& level) {
  if (level.empty()) return true;
  log::Level parsed;
  if (!log::ParseLevel(level, &parsed)) return false;
  log::SetLevel(parsed);
  return true;
}

void ClusterFlags(flags::FlagSet* set, std::string* kubeconfig,
                  std::vector<std::string>* namespaces) {
  set->String("kubeconfig", kubeconfig,
              "kubeconfig file; default $KUBECONFIG, else in-cluster config")
      .Metavar("PATH");
  set->List("namespaces", "a,b", namespaces,
            "namespaces to watch; empty (default) = all namespaces");
}

int ExitCode(std::string_view logger, const Status& run) {
  if (!run.ok()) {
    log::Error(logger, "exiting", {{"error", run.ToString()}});
    return 1;
  }
  log::Info(logger, "stopped");
  return 0;
}

}  // namespace switchboard::service
