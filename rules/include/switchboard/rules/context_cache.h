// The one context of the cross-object rules for callers that watch the
// cluster (the webhook's informers, the operator's caches): an immutable
// snapshot of the existing PubSubBackends and NatsServers with the index
// over them, built once per cache change and shared by every Validate()
// that runs while it is current. The CLI builds the same index from its
// --context files (Batch), so all three judge one set of objects alike.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "switchboard/rules/validate.h"

namespace switchboard::rules {

using ObjectPtr = std::shared_ptr<const nlohmann::json>;

// Immutable. Keeps what the index borrows (NatsServers, Secrets) alive; of a
// PubSubBackend only what the cross-object rules read of it.
class ContextSnapshot {
 public:
  // Every object of `context` (copied).
  explicit ContextSnapshot(const Context& context);
  // An index and the objects it borrows (ContextCache builds them).
  explicit ContextSnapshot(
      std::pair<std::vector<ObjectPtr>, std::unique_ptr<internal::CrossIndex>> built);
  ~ContextSnapshot();
  ContextSnapshot(const ContextSnapshot&) = delete;
  ContextSnapshot& operator=(const ContextSnapshot&) = delete;

  const ContextIndex& index() const { return index_; }

 private:
  friend class ContextCache;  // the next snapshot keeps what this one borrows
  std::vector<ObjectPtr> kept_;
  ContextIndex index_;  // borrows kept_ (declared first)
};

// Snapshots of a changing cache. A cache event calls Observe(): a
// PubSubBackend's change is carried into the next snapshot on its own (the
// current index copied, that one object taken out and put back in: O(N)
// pointer copies, nothing listed or read again), anything else calls
// Invalidate(), after which the next Snapshot() lists the cache again,
// reads only the objects whose resourceVersion changed, and builds a new
// index only when what the rules read of them changed (a status write, say,
// changes nothing they read).
class ContextCache {
 public:
  // How an object from the cache is judged: as the API server shows it.
  // The operator's caches keep a status packed (operator_logic::ApiShaped
  // turns it back); null for caches that keep objects as they came. Called
  // once per object version.
  using Shape = std::function<nlohmann::json(const nlohmann::json&)>;
  // The existing PubSubBackends and NatsServers (other kinds are ignored).
  using List = std::function<std::vector<ObjectPtr>()>;

  explicit ContextCache(List list, Shape shape = nullptr);
  ~ContextCache();

  // A watched cache changed. Thread-safe and lock-free: cache event
  // handlers call it.
  void Invalidate() { generation_.fetch_add(1, std::memory_order_acq_rel); }

  // A watched cache changed this object (`before` null: added; `after`
  // null: deleted), after the cache holds the change. A PubSubBackend's
  // status write, its finalizer or its resourceVersion alone, or a
  // NatsServer's status write (its installations count), leaves the
  // snapshot current. Any other change of a PubSubBackend (added, deleted,
  // a new prefix or status.username) is recorded and applied to the next
  // snapshot alone: with thousands of backends, each new one would
  // otherwise cost the next reconcile an O(N) listing and index build, and
  // a burst of N new ones O(N^2). Other changes invalidate. Thread-safe;
  // cache event handlers call it (in order per object, as informers do).
  void Observe(const nlohmann::json* before, const nlohmann::json* after);

  // The snapshot of the cache as of the last Invalidate() before this call.
  // Never null. Thread-safe; the listing and any rebuild run under the
  // cache's own lock, once for all concurrent callers.
  std::shared_ptr<const ContextSnapshot> Snapshot();

  // How many indexes were built (tests: a change that touches nothing the
  // rules read builds none), and how many of them from a listing of the
  // whole cache (the rest carried recorded backend changes into a copy).
  uint64_t builds() const;
  uint64_t listings() const;

 private:
  // One object known to the current snapshot.
  struct Entry {
    // metadata.resourceVersion its facts were read from; empty when it has
    // none (then it is read again on every rebuild).
    std::string version;
    size_t id = 0;  // its facts in the current snapshot's index
    bool secret = false;
    ObjectPtr object;  // kept for a NatsServer or a Secret: the index borrows them
  };

  // PubSubBackends changed since they were last indexed (context_cache.cc).
  struct Changes;

  std::unique_ptr<Changes> TakeChanges();
  // The next snapshot: the current one with `changes` applied; null when the
  // current index has so many removed ids that a listing should compact it.
  std::shared_ptr<const ContextSnapshot> Apply(const Changes& changes);
  // A snapshot from a listing of the whole cache; a new index even when
  // nothing the rules read changed when `compact` (one without removed ids).
  std::shared_ptr<const ContextSnapshot> Relist(uint64_t generation, bool compact);

  const List list_;
  const Shape shape_;
  std::atomic<uint64_t> generation_{1};
  std::mutex changes_mu_;
  std::unique_ptr<Changes> changes_;  // guarded by changes_mu_
  uint64_t observed_ = 0;             // changes recorded so far; guarded by changes_mu_
  mutable std::mutex mu_;
  uint64_t built_generation_ = 0;                    // guarded by mu_
  uint64_t builds_ = 0;                              // guarded by mu_
  uint64_t listings_ = 0;                            // guarded by mu_
  std::unordered_map<std::string, Entry> entries_;   // by kind/namespace/name; guarded by mu_
  std::shared_ptr<const ContextSnapshot> snapshot_;  // guarded by mu_
};

}  // namespace switchboard::rules
