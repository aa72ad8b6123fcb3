// A real nats-server for a test: its own config file in a temp dir, a free
// port on 127.0.0.1, stopped on destruction. Debian's nats-server from PATH
// unless another binary is named (the auth callout tests run
// nats-server-callout from the tools cache).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "switchboard/testing/process.h"
#include "switchboard/testing/temp_dir.h"

namespace switchboard::testing {

class NatsServer {
 public:
  // `extra_config` is appended to the generated config (listen address and
  // port come first). max_payload defaults to 16 MiB unless the extra config
  // sets it; pass `max_payload = 0` to leave the NATS default (1 MiB).
  explicit NatsServer(std::string extra_config = "", long max_payload = 16L * 1024 * 1024,
                      std::string binary = "nats-server");
  ~NatsServer();

  // True when the server accepted connections within the start deadline.
  bool ok() const { return started_; }
  int port() const { return port_; }
  std::string url() const { return "nats://127.0.0.1:" + std::to_string(port_); }
  const std::string& config_path() const { return config_path_; }
  const std::string& dir() const { return dir_.path(); }
  pid_t pid() const { return proc_.pid(); }

  // Rewrites the config (same port) and sends SIGHUP; true when the server
  // is still running afterwards.
  bool Reload(const std::string& extra_config);
  void Stop();
  // Starts again on the same port with the current config.
  bool Start();
  std::string Log() const { return proc_.Log(); }
  // The log once it contains `needle`, or as it is after `deadline`.
  std::string LogWith(const std::string& needle, std::chrono::milliseconds deadline) const;

 private:
  void WriteConfig(const std::string& extra_config);

  TempDir dir_;
  int port_;
  long max_payload_;
  std::string binary_;
  std::string config_path_;
  Process proc_;
  bool started_ = false;
};

}  // namespace switchboard::testing
