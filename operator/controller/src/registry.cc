#include "switchboard/controller/registry.h"

namespace switchboard::controller {

uint64_t Registry::Set(const std::string& backend_key, const std::string& server_key,
                       std::vector<NatsUser> users, std::string* old_server) {
  std::lock_guard lock(mu_);
  auto prev = server_of_.find(backend_key);
  if (prev != server_of_.end() && prev->second != server_key) {
    Server& old = servers_[prev->second];
    old.entries.erase(backend_key);
    old.epoch++;
    if (old_server) *old_server = prev->second;
  }
  server_of_[backend_key] = server_key;
  Server& s = servers_[server_key];
  auto it = s.entries.find(backend_key);
  if (it != s.entries.end() && it->second.users == users) return it->second.epoch;
  s.epoch++;
  BackendEntry& e = s.entries[backend_key];
  e.backend_key = backend_key;
  e.users = std::move(users);
  e.epoch = s.epoch;
  return e.epoch;
}

uint64_t Registry::Remove(const std::string& backend_key, const std::string& server_key,
                          std::string* old_server) {
  std::lock_guard lock(mu_);
  auto it = server_of_.find(backend_key);
  if (it != server_of_.end()) {
    if (it->second != server_key) {
      Server& old = servers_[it->second];
      old.entries.erase(backend_key);
      old.epoch++;
      if (old_server) *old_server = it->second;
    }
    server_of_.erase(it);
  }
  Server& s = servers_[server_key];
  s.entries.erase(backend_key);
  return ++s.epoch;
}

bool Registry::Known(const std::string& backend_key) const {
  std::lock_guard lock(mu_);
  return server_of_.count(backend_key) > 0;
}

std::string Registry::ServerOf(const std::string& backend_key) const {
  std::lock_guard lock(mu_);
  auto it = server_of_.find(backend_key);
  return it == server_of_.end() ? std::string() : it->second;
}

std::vector<BackendEntry> Registry::Entries(const std::string& server_key, uint64_t* epoch) const {
  std::lock_guard lock(mu_);
  std::vector<BackendEntry> out;
  auto it = servers_.find(server_key);
  if (it == servers_.end()) {
    if (epoch) *epoch = 0;
    return out;
  }
  if (epoch) *epoch = it->second.epoch;
  out.reserve(it->second.entries.size());
  for (const auto& [k, e] : it->second.entries) out.push_back(e);
  return out;
}

void Registry::MarkRendered(const std::string& server_key, uint64_t epoch, bool wrote) {
  std::lock_guard lock(mu_);
  Server& s = servers_[server_key];
  if (epoch > s.rendered) s.rendered = epoch;
  if (wrote) s.last_write = std::chrono::steady_clock::now();
}

std::chrono::steady_clock::time_point Registry::LastWrite(const std::string& server_key) const {
  std::lock_guard lock(mu_);
  auto it = servers_.find(server_key);
  return it == servers_.end() ? std::chrono::steady_clock::time_point{} : it->second.last_write;
}

uint64_t Registry::RenderedEpoch(const std::string& server_key) const {
  std::lock_guard lock(mu_);
  auto it = servers_.find(server_key);
  return it == servers_.end() ? 0 : it->second.rendered;
}

bool Registry::Rendered(const std::string& backend_key) const {
  std::lock_guard lock(mu_);
  auto b = server_of_.find(backend_key);
  if (b == server_of_.end()) return false;
  const Server& s = servers_.at(b->second);
  auto e = s.entries.find(backend_key);
  return e != s.entries.end() && s.rendered >= e->second.epoch;
}

}  // namespace switchboard::controller
