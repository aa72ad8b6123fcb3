// What each PubSubBackend contributes to its NatsServer's rendered config,
// shared by the two reconcilers: the backend reconciler Set()s its users,
// the NatsServer reconciler renders everything Set() for that server and
// records which version it wrote. In memory only: after a restart every
// backend is reconciled again (credentials come from their Secrets, never
// re-generated), and the server reconciler waits until every bound backend
// has reported before it renders, so a restart never drops a user.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace switchboard::controller {

struct NatsUser {
  std::string username;
  std::string bcrypt;   // the password's bcrypt hash, never the password
  std::string subject;  // "<prefix>.*"
  bool operator==(const NatsUser&) const = default;
};

struct BackendEntry {
  std::string backend_key;      // "namespace/name" of the PubSubBackend
  std::vector<NatsUser> users;  // empty: bound but contributes no user (invalid, ...)
  uint64_t epoch = 0;           // the server's epoch when this entry last changed
};

class Registry {
 public:
  // Records the backend's users on `server_key`. Returns the server epoch
  // that a render must reach to include this state. A backend that moved
  // servers is taken off the old one (returned in *old_server).
  uint64_t Set(const std::string& backend_key, const std::string& server_key,
               std::vector<NatsUser> users, std::string* old_server = nullptr);
  // Forgets the backend and bumps the epoch of `server_key` (and of the
  // server it was last seen on, when different: *old_server). Returns the
  // epoch a render of `server_key` must reach to exclude it. Works for a
  // backend never Set() (after a restart), so a finalizer can always wait
  // for a render without it.
  uint64_t Remove(const std::string& backend_key, const std::string& server_key,
                  std::string* old_server = nullptr);

  bool Known(const std::string& backend_key) const;
  // The server the backend is bound to ("" when unknown).
  std::string ServerOf(const std::string& backend_key) const;

  // All entries of a server (sorted by backend key) and its current epoch.
  std::vector<BackendEntry> Entries(const std::string& server_key, uint64_t* epoch) const;
  // A render of `epoch` is in the config Secret; `wrote` when this render
  // changed it (the time is kept: a probe refused soon after a write means
  // the server has not reloaded yet).
  void MarkRendered(const std::string& server_key, uint64_t epoch, bool wrote);
  // When the server's config Secret was last changed (epoch 0 of the clock: never).
  std::chrono::steady_clock::time_point LastWrite(const std::string& server_key) const;
  uint64_t RenderedEpoch(const std::string& server_key) const;
  // True when the server's written config includes the backend's current entry.
  bool Rendered(const std::string& backend_key) const;

 private:
  struct Server {
    uint64_t epoch = 0;     // bumped on every change
    uint64_t rendered = 0;  // last epoch written
    std::chrono::steady_clock::time_point last_write{};
    std::map<std::string, BackendEntry> entries;
  };
  mutable std::mutex mu_;
  std::map<std::string, Server> servers_;         // guarded by mu_
  std::map<std::string, std::string> server_of_;  // backend -> server; guarded by mu_
};

}  // namespace switchboard::controller
