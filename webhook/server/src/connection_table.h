// The open connections of the server, for the connection cap and for a
// graceful stop. At the cap, room is made by closing the connection that
// has been idle the longest: an idle keep-alive connection costs its client
// one reconnect, while refusing the new connection could turn away the API
// server while idle (or hostile) sockets hold every slot. A connection in
// the middle of a request is never chosen; its own deadline bounds it.
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace switchboard::webhook_server {

class TrackedConnection {
 public:
  virtual ~TrackedConnection() = default;
  // Since when the connection waits for its client without a request
  // started (handshake not begun by the client, or keep-alive between
  // requests); nullopt while a request is being read or answered. Called
  // from any thread.
  virtual std::optional<std::chrono::steady_clock::time_point> IdleSince() const = 0;
  // Closes the connection if it is still idle. Called from any thread; the
  // implementation moves to the connection's own executor. From this call
  // on IdleSince() returns nullopt, so the connection is not chosen twice.
  virtual void Evict() = 0;
  // Closes when idle, and answers a request in flight with
  // "Connection: close". Called from any thread.
  virtual void Shutdown() = 0;
};

class ConnectionTable {
 public:
  // Returns an id for Remove().
  uint64_t Add(std::weak_ptr<TrackedConnection> connection);
  void Remove(uint64_t id);
  int size() const;

  // Evicts the connection idle the longest. False when none is idle.
  bool EvictOldestIdle();
  // Shutdown() on every connection.
  void ShutdownAll();

 private:
  std::vector<std::weak_ptr<TrackedConnection>> Snapshot() const;

  mutable std::mutex mu_;
  uint64_t next_id_ = 1;                                                // guarded by mu_
  std::unordered_map<uint64_t, std::weak_ptr<TrackedConnection>> all_;  // guarded by mu_
};

}  // namespace switchboard::webhook_server
