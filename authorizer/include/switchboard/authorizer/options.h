// switchboard-authorizer's command line (the project's one flag parser,
// switchboard/common/flags.h).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "switchboard/common/flags.h"
#include "switchboard/common/status.h"

namespace switchboard::authorizer {

struct Options {
  std::string kubeconfig;               // "" = $KUBECONFIG, in-cluster, ~/.kube/config
  std::vector<std::string> namespaces;  // empty = all
  std::vector<std::string> servers;     // "ns/name"; empty = every NatsServer in AuthCallout mode
  flags::HostPort health{"", 8081};
  flags::HostPort metrics{"", 8080};
  std::string log_level;  // "" = info or $SWITCHBOARD_LOG_LEVEL
  std::chrono::milliseconds sweep_interval{30000};
  std::chrono::milliseconds kick_after{3000};
  int request_workers = 4;
  bool help = false;
};

// `args` without the program name. Errors name the flag.
Result<Options> ParseOptions(const std::vector<std::string>& args);
std::string Usage();

}  // namespace switchboard::authorizer
