// What every Switchboard daemon's main does around its own work, in one
// place so the binaries agree: a flag error exits 2 with the parser's
// message, --help prints the usage and exits 0, --log-level applies before
// anything logs; at the end a failed run is logged and exits 1. And the
// flags the daemons that watch the cluster share, in one wording.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/common/flags.h"
#include "switchboard/common/log.h"
#include "switchboard/common/status.h"

namespace switchboard::service {

// Applies --log-level ("" keeps the default). False for an unknown level.
bool ApplyLogLevel(const std::string& level);

// The preamble: an exit code when main must end now (bad flags: 2, --help:
// 0), nullopt to go on. Options needs `help` and `log_level`.
template <class Options, class UsageFn>
std::optional<int> Preamble(std::string_view program, const Result<Options>& opts,
                            UsageFn&& usage) {
  if (!opts.ok()) {
    std::fprintf(stderr, "%.*s: %s\n", static_cast<int>(program.size()), program.data(),
                 opts.status().message().c_str());
    return 2;
  }
  if (opts->help) {
    std::fputs(std::string(usage()).c_str(), stdout);
    return 0;
  }
  if (!ApplyLogLevel(opts->log_level)) {
    std::fprintf(stderr, "%.*s: --log-level must be debug, info, warn or error\n",
                 static_cast<int>(program.size()), program.data());
    return 2;
  }
  return std::nullopt;
}

// --kubeconfig PATH and --namespaces a,b, as switchboard-operator and
// switchboard-authorizer take them.
void ClusterFlags(flags::FlagSet* set, std::string* kubeconfig,
                  std::vector<std::string>* namespaces);

// --health-addr and --metrics-addr, as those two take them (their defaults,
// :8081 and :8080, are the callers' and named in the help). `Addr` is
// flags::HostPort, or std::string to keep the text (flags::FlagSet::Address).
template <class Addr>
void EndpointFlags(flags::FlagSet* set, Addr* health, Addr* metrics) {
  set->Address("health-addr", health,
               "/healthz and /readyz, plain HTTP (default :8081; 0 disables)");
  set->Address("metrics-addr", metrics, "Prometheus /metrics (default :8080; 0 disables)");
}

// The epilogue: logs how the run ended under `logger` and returns the exit
// code (1 when `run` failed, else 0).
int ExitCode(std::string_view logger, const Status& run);

}  // namespace switchboard::service
