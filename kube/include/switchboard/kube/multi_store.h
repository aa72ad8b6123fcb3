// Informers for one resource over a set of namespaces (one informer per
// namespace, or one for all namespaces), read as one cache.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "switchboard/kube/watcher.h"

namespace switchboard::kube {

class MultiStore {
 public:
  // `namespaces` empty: all namespaces. `client` must outlive this.
  MultiStore(Client* client, ResourceRef resource, const std::vector<std::string>& namespaces,
             WatcherOptions opts = {});
  void AddEventHandler(const StoreEventHandler& handler);
  void Start();
  void Stop();
  bool HasSynced() const;
  bool WaitForSync(std::chrono::milliseconds timeout) const;

  // Null when absent or outside the watched namespaces.
  ObjectPtr Get(std::string_view ns, std::string_view name) const;
  ObjectPtr Get(const std::string& key) const;
  // Every cached object (in namespace `ns` only, when given), sorted by key.
  std::vector<ObjectPtr> List(std::string_view ns = {}) const;
  size_t Size() const;

 private:
  Informer* For(std::string_view ns) const;

  bool all_ = false;
  std::vector<std::string> namespaces_;
  std::vector<std::unique_ptr<Informer>> informers_;  // parallel to namespaces_ (or one)
};

}  // namespace switchboard::kube
