// A routed cluster of real nats-server processes for a test: each on its own
// free 127.0.0.1 ports (client, cluster, monitor), routed to every other,
// all including one config body (a file of the kind the operator renders),
// stopped on destruction. One server can be stopped and started again on
// the same ports while the others run.
//
// The ports are chosen at construction and nothing runs until Start(): a
// test can name the cluster's URLs (a NatsServer's spec.url) before the
// config body they need exists.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "switchboard/testing/process.h"
#include "switchboard/testing/temp_dir.h"

namespace switchboard::testing {

class NatsCluster {
 public:
  struct Options {
    int size = 3;
    std::string binary = "nats-server";  // a path, or looked up in PATH
    std::string cluster_name = "switchboard-test";
    // How long Start() and StartServer() wait for ports and routes.
    std::chrono::milliseconds deadline = std::chrono::seconds(20);
  };

  explicit NatsCluster(Options options);
  ~NatsCluster();
  NatsCluster(const NatsCluster&) = delete;
  NatsCluster& operator=(const NatsCluster&) = delete;

  // Writes `config_body` as each server's include file, starts every
  // server and waits until all are routed to each other. False (with the
  // reason in error()) when that did not happen within the deadline.
  bool Start(const std::string& config_body);
  // The same with one body per server (bodies.size() == size()): for
  // configs that must differ between servers, e.g. each its own resolver
  // directory. Each server keeps its own body across restarts.
  bool Start(const std::vector<std::string>& bodies);
  // Replaces the include file of every server (one body for all, also
  // after Start with one body per server); a running server sees it only
  // when it is started again (nothing here sends SIGHUP).
  void SetConfigBody(const std::string& config_body);
  // The same with one body per server (bodies.size() == size()), e.g. a
  // rolling restart onto a config whose resolver store differs by server.
  // False (with the reason in error()) on a wrong count.
  bool SetConfigBodies(const std::vector<std::string>& bodies);

  // Server i (0-based) alone, on its own ports.
  void StopServer(int i);
  // Server i killed (SIGKILL): its client and route connections close at
  // once, as when its node goes, where SIGTERM closes its clients first
  // and its routes after them.
  void KillServer(int i);
  // Starts server i again and waits until it and every other running
  // server are routed to each other.
  bool StartServer(int i);
  bool RestartServer(int i);
  bool running(int i);

  // True when every running server has a route to every other running one,
  // by server name, and each route names the peer's current server id (a
  // restarted server has a new id: an old route to it does not count).
  bool Routed();
  bool WaitRouted(std::chrono::milliseconds timeout);

  int size() const { return static_cast<int>(servers_.size()); }
  int client_port(int i) const { return servers_.at(i).client_port; }
  int cluster_port(int i) const { return servers_.at(i).cluster_port; }
  int monitor_port(int i) const { return servers_.at(i).monitor_port; }
  std::string url(int i) const;
  // Every server's client URL, comma-separated (a seed list).
  std::string urls() const;
  std::string server_name(int i) const;
  pid_t pid(int i) const { return servers_.at(i).proc.pid(); }
  std::string Log(int i) const { return servers_.at(i).proc.Log(); }
  const std::string& dir() const { return dir_.path(); }
  const std::string& error() const { return error_; }

  // GET <monitor>/<endpoint> parsed (varz, routez, connz...); null when the
  // server does not answer within a second or the answer is not JSON.
  nlohmann::json Monitor(int i, const std::string& endpoint_and_query) const;
  // /varz config_load_time (changes with every (re)load of the config).
  std::optional<std::string> ConfigLoadTime(int i) const;

 private:
  struct Server {
    int client_port = 0, cluster_port = 0, monitor_port = 0;
    std::string config_path;
    std::string body_name = "body.conf";  // the file its config includes
    Process proc;
  };
  void WriteConfig(int i);
  bool Launch(int i);

  Options options_;
  TempDir dir_;
  std::string body_path_;
  std::vector<Server> servers_;
  std::string error_;
};

}  // namespace switchboard::testing
