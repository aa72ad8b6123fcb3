// What every Switchboard daemon's main does around its own work, in one
// place so the binaries agree: a flag error exits 2 with the parser's
// message, --help prints the usage and exits 0, --log-level applies before
// anything logs; at the end a failed run is logged and exits 1.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

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

// The epilogue: logs how the run ended under `logger` and returns the exit
// code (1 when `run` failed, else 0).
int ExitCode(std::string_view logger, const Status& run);

}  // namespace switchboard::service
