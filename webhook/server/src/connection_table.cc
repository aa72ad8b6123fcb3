#include "connection_table.h"

#include <vector>

namespace switchboard::webhook_server {

uint64_t ConnectionTable::Add(std::weak_ptr<TrackedConnection> connection) {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t id = next_id_++;
  all_.emplace(id, std::move(connection));
  return id;
}

void ConnectionTable::Remove(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  all_.erase(id);
}

int ConnectionTable::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(all_.size());
}

std::vector<std::weak_ptr<TrackedConnection>> ConnectionTable::Snapshot() const {
  std::vector<std::weak_ptr<TrackedConnection>> out;
  std::lock_guard<std::mutex> lock(mu_);
  out.reserve(all_.size());
  for (const auto& [id, weak] : all_) out.push_back(weak);
  return out;
}

// Both walks run on a copy taken under the lock: a shared_ptr locked here
// may turn out to be the last owner, and the connection's destructor
// calls Remove().
bool ConnectionTable::EvictOldestIdle() {
  std::shared_ptr<TrackedConnection> oldest;
  std::optional<std::chrono::steady_clock::time_point> oldest_since;
  // A linear scan: it runs only at the cap, and a scan of a few thousand
  // entries costs less than a TLS handshake.
  for (const auto& weak : Snapshot()) {
    auto conn = weak.lock();
    if (!conn) continue;
    auto since = conn->IdleSince();
    if (!since) continue;
    if (!oldest_since || *since < *oldest_since) {
      oldest_since = since;
      oldest = std::move(conn);
    }
  }
  if (!oldest) return false;
  oldest->Evict();
  return true;
}

void ConnectionTable::ShutdownAll() {
  for (const auto& weak : Snapshot()) {
    if (auto conn = weak.lock()) conn->Shutdown();
  }
}

}  // namespace switchboard::webhook_server
