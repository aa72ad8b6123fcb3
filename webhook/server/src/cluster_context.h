// The ContextSource of the running webhook: two informers (list + watch,
// all namespaces) on PubSubBackends and NatsServers. Requests never list:
// they read a snapshot rebuilt lazily after the caches change.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

#include "switchboard/kube/client.h"
#include "switchboard/kube/watcher.h"
#include "switchboard/webhook_admission/context_source.h"

namespace switchboard::webhook_server {

class ClusterContext : public webhook_admission::ContextSource {
 public:
  // `client` must outlive this object. Starts both informers.
  explicit ClusterContext(kube::Client* client);
  ~ClusterContext() override;  // stops the informers

  std::shared_ptr<const webhook_admission::ContextSnapshot> Snapshot() const override;
  bool Synced() const override;

 private:
  // mutable: reading a store is const in spirit, Informer::store() is not.
  mutable kube::Informer backends_;
  mutable kube::Informer servers_;
  // Bumped by every cache event; Snapshot() rebuilds when it moved on.
  std::atomic<uint64_t> generation_{1};
  mutable std::mutex mu_;
  mutable uint64_t built_generation_ = 0;                                       // guarded by mu_
  mutable std::shared_ptr<const webhook_admission::ContextSnapshot> snapshot_;  // guarded by mu_
};

}  // namespace switchboard::webhook_server
