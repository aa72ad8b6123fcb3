// List-then-watch that never ends on its own: an explicit state machine
// (Empty -> InitListed -> Watching) on its own thread.
//
//   Empty       list all pages; emit kRestarted with every object -> InitListed
//   InitListed  start a watch from the list's resourceVersion    -> Watching
//   Watching    apply events; a disconnect or server timeout resumes from
//               the last seen resourceVersion (bookmarks advance it);
//               410 Gone ("too old resource version") -> Empty (relist)
//
// Failures (network, API server down, Forbidden) are reported as kError
// events and retried with exponential backoff; the watcher only stops on
// Stop() (or destruction).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "switchboard/kube/client.h"
#include "switchboard/kube/field_mask.h"
#include "switchboard/kube/store.h"

namespace switchboard::kube {

enum class WatcherState { kEmpty, kInitListed, kWatching };
std::string_view WatcherStateName(WatcherState s);

struct WatcherEvent {
  enum class Type { kRestarted, kApplied, kDeleted, kError };
  Type type = Type::kApplied;
  std::vector<json> objects;  // kRestarted: the full current set (none with stream_list)
  // kRestarted with WatcherOptions::stream_list: the key (ObjectKeyOf) of
  // every listed object, each already delivered as a kApplied event.
  std::vector<std::string> listed;
  json object;   // kApplied / kDeleted
  Status error;  // kError
};

struct WatcherOptions {
  std::string label_selector;
  std::string field_selector;
  int64_t page_size = 500;
  int64_t watch_timeout_seconds =
      290;  // server closes the watch (plus up to 50% jitter); we resume
  std::chrono::milliseconds initial_backoff{200};
  std::chrono::milliseconds max_backoff{std::chrono::seconds(30)};
  std::chrono::milliseconds list_timeout{std::chrono::seconds(60)};  // per page
  // Drop metadata.managedFields and the last-applied-configuration annotation
  // before handlers (and so caches) see an object: no controller reads them,
  // and they are often half of an object's size, so a cache of 1,000
  // objects would otherwise hold megabytes of bookkeeping.
  bool trim_bookkeeping = true;
  // Applied in place to each listed (as its page arrives) or watched
  // object (after the trim),
  // before handlers and so caches see it, as client-go's SetTransform: a
  // controller keeps only the fields it reads, so a cache of thousands of
  // objects holds kilobytes rather than megabytes. It must keep
  // metadata.name, .namespace and .resourceVersion (the store's key and
  // change detection). Runs on the watcher's thread; empty: none.
  std::function<void(json&)> transform;
  // A list delivered item by item: each listed object as a kApplied event
  // as its page arrives (after the transform), then one kRestarted with no
  // objects and `listed` (every listed key): the handler drops what it
  // holds from this watcher and `listed` lacks. For a handler that keeps a
  // typed value per object rather than the object: a relist never holds
  // every parsed page at once. The Informer's Store takes the list whole
  // (false).
  bool stream_list = false;
  // Parse-time: of each listed or watched object only these members are
  // parsed at all (field_mask.h), before the trim and the transform, so the
  // API's whole object never exists in memory. The transform must give
  // the same result on the masked object: keep at least what it keeps
  // and what it reads to decide. Default: everything.
  FieldMask parse_keep;
};

class Watcher {
 public:
  using Handler = std::function<void(WatcherEvent&)>;

  // `client` must outlive the watcher. `ns` empty: all namespaces.
  // `handler` runs on the watcher's thread, one event at a time, in order;
  // keep it short (update a cache, enqueue keys). It may move the objects
  // out of the event (the watcher drops the event after it): a cache that
  // copied them would hold every listed object twice for a moment. Exceptions
  // it throws are logged and swallowed.
  Watcher(Client* client, ResourceRef resource, std::string ns, WatcherOptions opts,
          Handler handler);
  ~Watcher();  // Stop()
  Watcher(const Watcher&) = delete;
  Watcher& operator=(const Watcher&) = delete;

  void Start();  // starts the thread; once
  void Stop();   // cancels the open request and joins; idempotent

  WatcherState state() const { return state_.load(); }
  std::string last_resource_version() const;
  // Number of successful (re)lists so far; tests and metrics.
  int64_t lists() const { return lists_.load(); }

 private:
  void Run();
  bool Sleep(std::chrono::milliseconds d);  // false when stopping
  void Shape(json& object) const;           // trim_bookkeeping, transform, in place
  void Emit(WatcherEvent& ev);              // shapes a watched object, then Deliver
  void Deliver(WatcherEvent& ev);           // calls the handler

  Client* client_;
  ResourceRef resource_;
  std::string ns_;
  WatcherOptions opts_;
  Handler handler_;

  std::atomic<WatcherState> state_{WatcherState::kEmpty};
  std::atomic<int64_t> lists_{0};
  mutable std::mutex mu_;
  std::string rv_;                        // guarded by mu_
  std::shared_ptr<Cancellation> cancel_;  // guarded by mu_
  std::condition_variable stop_cv_;
  bool stopping_ = false;  // guarded by mu_
  bool running_ = false;   // Run() is executing; guarded by mu_
  std::thread thread_;
};

// A Watcher feeding a Store (a reflector/informer): the store is synced
// once the first list is in and tracks the server afterwards.
class Informer {
 public:
  Informer(Client* client, ResourceRef resource, std::string ns, WatcherOptions opts = {});
  // Optional observer of watcher errors (logged at warn level anyway).
  void OnError(std::function<void(const Status&)> fn) { on_error_ = std::move(fn); }
  Store& store() { return store_; }
  const Watcher& watcher() const { return watcher_; }
  void Start() { watcher_.Start(); }
  void Stop() { watcher_.Stop(); }

 private:
  Store store_;
  std::function<void(const Status&)> on_error_;
  Watcher watcher_;
};

}  // namespace switchboard::kube
