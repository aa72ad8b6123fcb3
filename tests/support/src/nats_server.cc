#include "switchboard/testing/nats_server.h"

#include <signal.h>

#include <fstream>
#include <utility>

#include "switchboard/testing/net.h"
#include "switchboard/testing/wait.h"

namespace switchboard::testing {

NatsServer::NatsServer(std::string extra_config, long max_payload, std::string binary)
    : port_(FreePort()), max_payload_(max_payload), binary_(std::move(binary)) {
  config_path_ = dir_.path() + "/nats.conf";
  WriteConfig(extra_config);
  Start();
}

NatsServer::~NatsServer() { Stop(); }

void NatsServer::WriteConfig(const std::string& extra_config) {
  std::ofstream out(config_path_);
  out << "listen: \"127.0.0.1:" << port_ << "\"\n";
  if (max_payload_ > 0 && extra_config.find("max_payload") == std::string::npos) {
    out << "max_payload: " << max_payload_ << "\n";
  }
  out << extra_config << "\n";
}

bool NatsServer::Start() {
  proc_ = Process(Process::Options{
      .argv = {binary_, "-c", config_path_},
      .log_path = dir_.path() + "/nats.log",
  });
  started_ = WaitForPort(port_, std::chrono::seconds(10)) && proc_.running();
  return started_;
}

void NatsServer::Stop() {
  proc_.Stop();
  started_ = false;
}

bool NatsServer::Reload(const std::string& extra_config) {
  WriteConfig(extra_config);
  return proc_.Signal(SIGHUP) && proc_.running();
}

std::string NatsServer::LogWith(const std::string& needle,
                                std::chrono::milliseconds deadline) const {
  std::string log;
  WaitFor(
      [&] {
        log = Log();
        return log.find(needle) != std::string::npos;
      },
      deadline);
  return log;
}

}  // namespace switchboard::testing
