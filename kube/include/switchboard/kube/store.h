// A thread-safe cache of objects keyed "namespace/name", fed by one writer
// (a Watcher) and read by many. Objects are immutable shared snapshots, so a
// reader's copy stays valid while the cache moves on.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "switchboard/kube/resource.h"

namespace switchboard::kube {

using ObjectPtr = std::shared_ptr<const json>;

// Handlers run on the writer's thread, after the cache changed, outside the
// store's lock (they may read the store). Keep them short: enqueue a key.
struct StoreEventHandler {
  std::function<void(const ObjectPtr& obj)> on_add;
  std::function<void(const ObjectPtr& old_obj, const ObjectPtr& new_obj)> on_update;
  std::function<void(const ObjectPtr& obj)> on_delete;
};

class Store {
 public:
  // Writer side (one thread).
  // Replaces the whole content (after a list/relist) and marks the store
  // synced; emits add/update/delete for the differences.
  void Replace(std::vector<json> objects);
  // Inserts or replaces by ObjectKeyOf(obj); emits add or update.
  void Upsert(json obj);
  // Removes by key; emits delete with the last known state (when present).
  void Remove(const json& obj);

  // Readers (any thread).
  // True once the first Replace has completed (the initial list is in).
  bool HasSynced() const;
  // Blocks until synced or the timeout passes; returns HasSynced().
  bool WaitForSync(std::chrono::milliseconds timeout) const;
  ObjectPtr Get(const std::string& key) const;  // null when absent
  ObjectPtr Get(std::string_view ns, std::string_view name) const;
  std::vector<ObjectPtr> List() const;  // a snapshot, sorted by key
  std::vector<std::string> Keys() const;
  size_t Size() const;

  // Registers a handler; existing objects are not replayed. Thread-safe.
  void AddEventHandler(StoreEventHandler handler);

 private:
  std::vector<StoreEventHandler> Handlers() const;

  mutable std::shared_mutex mu_;
  std::map<std::string, ObjectPtr> items_;  // guarded by mu_
  bool synced_ = false;                     // guarded by mu_
  mutable std::mutex sync_mu_;
  mutable std::condition_variable sync_cv_;
  mutable std::mutex handlers_mu_;
  std::vector<StoreEventHandler> handlers_;  // guarded by handlers_mu_
};

}  // namespace switchboard::kube
