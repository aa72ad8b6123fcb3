// Command-line options of `switchboard-operator` (documented in
// operator/README.md, which the Helm chart follows). Parsing is pure: no
// environment lookups except where a flag says so (KUBECONFIG is resolved by
// the caller), so it is tested with tables of argv.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/common/flags.h"
#include "switchboard/common/status.h"

namespace switchboard::operator_controller {

using Millis = std::chrono::milliseconds;

struct Options {
  std::string kubeconfig;               // --kubeconfig; empty: $KUBECONFIG, else in-cluster
  std::vector<std::string> namespaces;  // --namespaces a,b; empty: all namespaces
  bool leader_elect = false;            // --leader-elect
  std::string lease_namespace;          // --lease-namespace; empty: the pod's or "default"
  std::string lease_name = "switchboard-operator";  // --lease-name
  std::string identity;                             // --identity; empty: <hostname>_<pid>
  Millis lease_duration{15000};                     // --lease-duration
  Millis renew_deadline{10000};                     // --renew-deadline
  Millis retry_period{2000};                        // --retry-period
  std::string health_addr = ":8081";                // --health-addr; "0" disables
  std::string metrics_addr = ":8080";               // --metrics-addr; "0" disables
  int workers = 8;                                  // --workers
  int probe_workers = 8;                            // --probe-workers
  Millis probe_timeout{5000};                       // --probe-timeout: one probe's deadline
  Millis probe_interval{300000};  // --probe-interval: re-probe a Ready backend this often
  Millis resync_period{0};        // --resync-period: 0 = never re-list on a timer
  std::string field_manager = "switchboard-operator";  // --field-manager (managedFields)
  std::string log_level;                               // --log-level debug|info|warn|error
  bool help = false;                                   // --help
};

// Address flags: "host:port", ":port" (all interfaces) or "0" (disabled:
// port -1), parsed as every binary parses them (common/flags.h).
using flags::HostPort;
using flags::ParseHostPort;

// Parses argv (argv[0] skipped) with the project's one flag parser
// (switchboard/common/flags.h: --flag=value and --flag value, booleans as
// --flag or --flag=true|false, Go durations). Unknown flags and bad values
// are errors naming the flag; semantic checks (renew-deadline <
// lease-duration, workers >= 1) too. --help stops parsing and sets `help`.
Result<Options> ParseOptions(const std::vector<std::string>& args);

// The --help text, from the same flag list.
std::string Usage();

}  // namespace switchboard::operator_controller
