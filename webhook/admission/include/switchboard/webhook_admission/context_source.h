// Where the admission decision gets the objects that already exist, for the
// cross-object rules (same prefix or username on one server, namespaces a
// server allows). The decision only sees this interface, so it stays pure and
// unit-testable; the server passes a watch-backed cache, tests pass a
// StaticContextSource.
#pragma once

#include <memory>
#include <mutex>
#include <utility>

#include "switchboard/rules/context_cache.h"

namespace switchboard::webhook_admission {

// The existing objects' index, built once per change of the cache (the
// rules' own, shared with the operator: rules/context_cache.h).
using rules::ContextSnapshot;

class ContextSource {
 public:
  virtual ~ContextSource() = default;

  // An immutable snapshot of the existing PubSubBackends and NatsServers.
  // Never null. Cheap (a shared_ptr copy): called once per admission request.
  // Thread-safe.
  virtual std::shared_ptr<const ContextSnapshot> Snapshot() const = 0;

  // True once the snapshot reflects a complete initial list of the cluster
  // (what /readyz reports). Thread-safe.
  virtual bool Synced() const = 0;
};

// A fixed set of objects, replaceable as a whole. Always synced. Used by
// tests, benchmarks and the fuzzer; it is a real implementation, not a mock.
class StaticContextSource : public ContextSource {
 public:
  explicit StaticContextSource(rules::Context context = {})
      : snapshot_(std::make_shared<const ContextSnapshot>(std::move(context))) {}

  std::shared_ptr<const ContextSnapshot> Snapshot() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return snapshot_;
  }
  bool Synced() const override { return true; }

  void Replace(rules::Context context) {
    auto next = std::make_shared<const ContextSnapshot>(std::move(context));
    std::lock_guard<std::mutex> lock(mu_);
    snapshot_ = std::move(next);
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const ContextSnapshot> snapshot_;  // guarded by mu_
};

}  // namespace switchboard::webhook_admission
