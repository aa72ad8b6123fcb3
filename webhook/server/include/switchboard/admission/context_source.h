// Where the admission decision gets the objects that already exist, for the
// cross-object rules (same prefix or username on one server, namespaces a
// server allows). The decision only sees this interface, so it stays pure and
// unit-testable; the server passes a watch-backed cache, tests pass a
// StaticContextSource.
#pragma once

#include <memory>
#include <mutex>
#include <utility>

#include "switchboard/validation/validate.h"

namespace switchboard::admission {

class ContextSource {
 public:
  virtual ~ContextSource() = default;

  // An immutable snapshot of the existing PubSubBackends and NatsServers.
  // Never null. Cheap (a shared_ptr copy): called once per admission request.
  // Thread-safe.
  virtual std::shared_ptr<const validation::Context> Snapshot() const = 0;

  // True once the snapshot reflects a complete initial list of the cluster
  // (what /readyz reports). Thread-safe.
  virtual bool Synced() const = 0;
};

// A fixed set of objects, replaceable as a whole. Always synced. Used by
// tests, benchmarks and the fuzzer; it is a real implementation, not a mock.
class StaticContextSource : public ContextSource {
 public:
  explicit StaticContextSource(validation::Context context = {})
      : snapshot_(std::make_shared<const validation::Context>(std::move(context))) {}

  std::shared_ptr<const validation::Context> Snapshot() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return snapshot_;
  }
  bool Synced() const override { return true; }

  void Replace(validation::Context context) {
    auto next = std::make_shared<const validation::Context>(std::move(context));
    std::lock_guard<std::mutex> lock(mu_);
    snapshot_ = std::move(next);
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const validation::Context> snapshot_;  // guarded by mu_
};

}  // namespace switchboard::admission
