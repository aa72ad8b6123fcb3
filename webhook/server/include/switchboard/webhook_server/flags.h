// Command-line flags of switchboard-webhook. Parsing is pure (no I/O) so it
// is unit-tested; main() prints Usage() for --help and errors.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "switchboard/common/status.h"

namespace switchboard::webhook_server {

struct Flags {
  std::string tls_cert_file;  // PEM certificate (chain); required
  std::string tls_key_file;   // PEM private key; required
  std::string bind_address = "0.0.0.0";
  int port = 9443;                   // HTTPS: /validate /mutate /healthz /readyz /metrics
  int metrics_port = 8080;           // plain-HTTP /metrics; 0 turns it off
  std::string kubeconfig;            // empty: $KUBECONFIG, else in-cluster config
  size_t max_body_bytes = 4u << 20;  // bigger request bodies get 413
  int worker_threads = 0;            // event-loop threads; 0: one per CPU, at most 16
  int max_connections = 1024;        // open HTTPS connections at most
  std::chrono::milliseconds request_timeout{10000};  // handshake; request; response
  std::chrono::milliseconds idle_timeout{60000};     // keep-alive between requests
  std::string log_level;  // debug|info|warn|error; empty: $SWITCHBOARD_LOG_LEVEL
  bool help = false;
};

// Parses argv[1..] with the project's one flag parser
// (switchboard/common/flags.h: "--flag value" or "--flag=value", Go
// durations). On error the Status message names the flag and what is
// expected. --help sets `help` and skips the required-flag checks.
Result<Flags> ParseFlags(const std::vector<std::string>& args);

// The --help text, from the same flag list.
std::string Usage();

}  // namespace switchboard::webhook_server
