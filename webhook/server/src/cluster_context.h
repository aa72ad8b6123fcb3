// The ContextSource of the running webhook: two informers (list + watch,
// all namespaces) on PubSubBackends and NatsServers. Requests never list:
// they read a snapshot rebuilt lazily after the caches change
// (rules::ContextCache, the same as the operator's).
#pragma once

#include <memory>

#include "switchboard/kube/client.h"
#include "switchboard/kube/watcher.h"
#include "switchboard/rules/context_cache.h"
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
  // Told of every cache event (Observe); synchronised internally.
  mutable rules::ContextCache context_;
};

}  // namespace switchboard::webhook_server
