// The operator's cache of the Secrets it owns (label-selected, in the
// watched namespaces or all): each kept as a SecretRecord, fed by one
// kube::Watcher per namespace (or one for all) that lists item by item
// (WatcherOptions::stream_list), so neither a relist nor the cache ever
// holds a Secret as a DOM for longer than one event.
//
// Readers get the object as the API shows the kept members (ObjectOf),
// built from the record on each Get and each event: the same reads as an
// informer's Store, for the owned-Secret readers (secret_io.h, the
// provisioners, the wake table, the config index), at the cost of building
// a small object per read instead of the cache holding 2,000 of them.
//
// Handlers run on a watcher's thread after the cache changed, outside its
// lock, as kube::Store's do: add, update (only when the resourceVersion
// moved) and delete (with the state the server last sent). Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "secret_record.h"
#include "switchboard/kube/store.h"
#include "switchboard/kube/watcher.h"

namespace switchboard::operator_controller {

class SecretCache {
 public:
  using RecordPtr = std::shared_ptr<const SecretRecord>;

  // `namespaces` empty: all namespaces. `client` must outlive this. `opts`
  // gives the selectors and the parse mask; its transform, stream_list and
  // trim are set here (the record is the shape).
  SecretCache(kube::Client* client, const std::vector<std::string>& namespaces,
              kube::WatcherOptions opts);
  ~SecretCache();  // Stop()
  SecretCache(const SecretCache&) = delete;
  SecretCache& operator=(const SecretCache&) = delete;

  // Before Start: existing records are not replayed.
  void AddEventHandler(kube::StoreEventHandler handler);
  void Start();
  void Stop();  // joins the watchers; idempotent

  // True once every watcher has listed once.
  bool HasSynced() const;
  bool WaitForSync(std::chrono::milliseconds timeout) const;

  // The Secret as ObjectOf shows it; null when absent (or outside the
  // watched namespaces, which are never cached).
  kube::ObjectPtr Get(std::string_view ns, std::string_view name) const;
  kube::ObjectPtr Get(const std::string& key) const;
  // The record itself; null when absent.
  RecordPtr Record(std::string_view ns, std::string_view name) const;
  size_t Size() const;

  // One watcher's event, as its handler: the cache's only writer. Public
  // for the table tests, which feed events without an API server.
  // `scope` is the watcher's namespace ("" for all).
  void Apply(kube::WatcherEvent& ev, std::string_view scope);

 private:
  struct Change {
    RecordPtr before;
    RecordPtr after;
  };
  void Emit(const std::vector<Change>& changes) const;

  std::vector<std::string> scopes_;  // one per watcher
  std::vector<std::unique_ptr<kube::Watcher>> watchers_;

  mutable std::shared_mutex mu_;
  std::map<std::string, RecordPtr, std::less<>> items_;  // ns/name; guarded by mu_
  std::vector<std::string> synced_;                      // scopes listed once; guarded by mu_
  mutable std::mutex sync_mu_;
  mutable std::condition_variable sync_cv_;

  mutable std::mutex handlers_mu_;
  std::vector<kube::StoreEventHandler> handlers_;  // guarded by handlers_mu_
};

}  // namespace switchboard::operator_controller
