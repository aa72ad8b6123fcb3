// Where the admission decision gets the objects that already exist, for the
// cross-object rules (same prefix or username on one server, namespaces a
// server allows). The decision only sees this interface, so it stays pure and
// unit-testable; the server passes a watch-backed cache, tests pass a
// StaticContextSource.
#pragma once

#include <memory>
#include <mutex>
#include <utility>

#include "switchboard/rules/validate.h"

namespace switchboard::webhook_admission {

// The existing objects plus an index over them, built once per change of
// the cache: validating against a ContextIndex costs nothing proportional
// to the number of objects, so a review stays fast with thousands of them.
// Immutable; shared by every request that runs while it is current.
class ContextSnapshot {
 public:
  explicit ContextSnapshot(rules::Context context)
      : context_(std::move(context)), index_(context_) {}
  ContextSnapshot(const ContextSnapshot&) = delete;
  ContextSnapshot& operator=(const ContextSnapshot&) = delete;

  const rules::Context& context() const { return context_; }
  const rules::ContextIndex& index() const { return index_; }

 private:
  rules::Context context_;
  rules::ContextIndex index_;  // borrows context_ (declared first)
};

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
