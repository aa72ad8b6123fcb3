#include "switchboard/testing/nats_cluster.h"

#include <httplib.h>

#include <csignal>
#include <fstream>
#include <map>
#include <set>
#include <utility>

#include "switchboard/testing/net.h"
#include "switchboard/testing/wait.h"

namespace switchboard::testing {

NatsCluster::NatsCluster(Options options) : options_(std::move(options)) {
  body_path_ = dir_.path() + "/body.conf";
  servers_.resize(static_cast<size_t>(options_.size));
  for (int i = 0; i < size(); i++) {
    Server& s = servers_[i];
    s.client_port = FreePort();
    s.cluster_port = FreePort();
    s.monitor_port = FreePort();
    s.config_path = dir_.path() + "/" + server_name(i) + ".conf";
  }
}

NatsCluster::~NatsCluster() {
  for (int i = 0; i < size(); i++) StopServer(i);
}

std::string NatsCluster::url(int i) const {
  return "nats://127.0.0.1:" + std::to_string(client_port(i));
}

std::string NatsCluster::urls() const {
  std::string out;
  for (int i = 0; i < size(); i++) out += (i ? "," : "") + url(i);
  return out;
}

std::string NatsCluster::server_name(int i) const { return "s" + std::to_string(i + 1); }

void NatsCluster::SetConfigBody(const std::string& config_body) {
  std::ofstream(body_path_) << config_body << "\n";
  for (Server& s : servers_) s.body_name = "body.conf";
}

bool NatsCluster::SetConfigBodies(const std::vector<std::string>& bodies) {
  if (static_cast<int>(bodies.size()) != size()) {
    error_ = "one body per server: " + std::to_string(bodies.size()) + " for " +
             std::to_string(size()) + " servers";
    return false;
  }
  for (int i = 0; i < size(); i++) {
    Server& s = servers_.at(i);
    s.body_name = "body-" + server_name(i) + ".conf";
    std::ofstream(dir_.path() + "/" + s.body_name) << bodies[i] << "\n";
  }
  return true;
}

void NatsCluster::WriteConfig(int i) {
  const Server& s = servers_.at(i);
  std::ofstream out(s.config_path);
  out << "server_name: " << server_name(i) << "\n"
      << "listen: \"127.0.0.1:" << s.client_port << "\"\n"
      << "http: \"127.0.0.1:" << s.monitor_port << "\"\n"
      << "cluster {\n  name: " << options_.cluster_name
      << "\n  listen: \"127.0.0.1:" << s.cluster_port << "\"\n  routes: [\n";
  for (int j = 0; j < size(); j++) {
    if (j != i) out << "    \"nats-route://127.0.0.1:" << cluster_port(j) << "\"\n";
  }
  out << "  ]\n}\n"
      << "include \"" << s.body_name << "\"\n";
}

bool NatsCluster::Launch(int i) {
  WriteConfig(i);
  Server& s = servers_.at(i);
  s.proc = Process(Process::Options{
      .argv = {options_.binary, "-c", s.config_path},
      .log_path = dir_.path() + "/" + server_name(i) + ".log",
  });
  if (!WaitForPort(s.client_port, options_.deadline) || !s.proc.running()) {
    error_ = server_name(i) + " did not accept connections:\n" + s.proc.Log();
    return false;
  }
  return true;
}

bool NatsCluster::Start(const std::string& config_body) {
  SetConfigBody(config_body);
  for (int i = 0; i < size(); i++) {
    if (!Launch(i)) return false;
  }
  return WaitRouted(options_.deadline);
}

bool NatsCluster::Start(const std::vector<std::string>& bodies) {
  if (!SetConfigBodies(bodies)) return false;
  for (int i = 0; i < size(); i++) {
    if (!Launch(i)) return false;
  }
  return WaitRouted(options_.deadline);
}

void NatsCluster::StopServer(int i) { servers_.at(i).proc.Stop(); }

void NatsCluster::KillServer(int i) {
  servers_.at(i).proc.Signal(SIGKILL);
  servers_.at(i).proc.Stop();  // reaps it
}

bool NatsCluster::StartServer(int i) { return Launch(i) && WaitRouted(options_.deadline); }

bool NatsCluster::RestartServer(int i) {
  StopServer(i);
  return StartServer(i);
}

bool NatsCluster::running(int i) { return servers_.at(i).proc.running(); }

nlohmann::json NatsCluster::Monitor(int i, const std::string& endpoint_and_query) const {
  httplib::Client c("127.0.0.1", monitor_port(i));
  c.set_connection_timeout(1);
  c.set_read_timeout(1);
  auto r = c.Get("/" + endpoint_and_query);
  if (!r || r->status != 200) return nullptr;
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  return j.is_discarded() ? nlohmann::json() : j;
}

std::optional<std::string> NatsCluster::ConfigLoadTime(int i) const {
  auto varz = Monitor(i, "varz");
  if (!varz.is_object()) return std::nullopt;
  auto t = varz.find("config_load_time");
  if (t == varz.end() || !t->is_string()) return std::nullopt;
  return t->get<std::string>();
}

bool NatsCluster::Routed() {
  // The current server id of each running server, by name.
  std::map<std::string, std::string> ids;
  for (int i = 0; i < size(); i++) {
    if (!running(i)) continue;
    auto varz = Monitor(i, "varz");
    if (!varz.is_object() || !varz.contains("server_id")) {
      error_ = server_name(i) + " does not answer /varz";
      return false;
    }
    ids[server_name(i)] = varz["server_id"].get<std::string>();
  }
  for (int i = 0; i < size(); i++) {
    if (!running(i)) continue;
    auto routez = Monitor(i, "routez");
    if (!routez.is_object()) {
      error_ = server_name(i) + " does not answer /routez";
      return false;
    }
    std::set<std::string> peers;  // names whose current instance this server routes to
    for (const auto& r : routez.value("routes", nlohmann::json::array())) {
      auto name = r.value("remote_name", "");
      auto id = ids.find(name);
      if (id != ids.end() && id->second == r.value("remote_id", "")) peers.insert(name);
    }
    for (const auto& [name, id] : ids) {
      if (name != server_name(i) && peers.count(name) == 0) {
        error_ = server_name(i) + " has no route to " + name + " (" + id + "): " + routez.dump();
        return false;
      }
    }
  }
  error_.clear();
  return true;
}

bool NatsCluster::WaitRouted(std::chrono::milliseconds timeout) {
  return WaitFor([&] { return Routed(); }, timeout, std::chrono::milliseconds(50));
}

}  // namespace switchboard::testing
