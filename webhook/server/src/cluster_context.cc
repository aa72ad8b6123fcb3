#include "cluster_context.h"

#include "switchboard/common/log.h"

namespace switchboard::webhook_server {

ClusterContext::ClusterContext(kube::Client* client)
    : backends_(client, kube::resources::PubSubBackend(), ""),
      servers_(client, kube::resources::NatsServer(), ""),
      snapshot_(std::make_shared<const webhook_admission::ContextSnapshot>(rules::Context{})) {
  kube::StoreEventHandler bump;
  bump.on_add = [this](const kube::ObjectPtr&) { ++generation_; };
  bump.on_update = [this](const kube::ObjectPtr&, const kube::ObjectPtr&) { ++generation_; };
  bump.on_delete = [this](const kube::ObjectPtr&) { ++generation_; };
  backends_.store().AddEventHandler(bump);
  servers_.store().AddEventHandler(bump);
  auto on_error = [](const Status& s) {
    log::Warn("webhook", "object cache watch error; retrying", {{"error", s.message()}});
  };
  backends_.OnError(on_error);
  servers_.OnError(on_error);
  backends_.Start();
  servers_.Start();
}

ClusterContext::~ClusterContext() {
  backends_.Stop();
  servers_.Stop();
}

bool ClusterContext::Synced() const {
  return backends_.store().HasSynced() && servers_.store().HasSynced();
}

std::shared_ptr<const webhook_admission::ContextSnapshot> ClusterContext::Snapshot() const {
  uint64_t generation = generation_.load();
  std::lock_guard<std::mutex> lock(mu_);
  if (generation == built_generation_) return snapshot_;
  rules::Context next;
  for (const auto& o : backends_.store().List()) next.backends.push_back(*o);
  for (const auto& o : servers_.store().List()) next.servers.push_back(*o);
  snapshot_ = std::make_shared<const webhook_admission::ContextSnapshot>(std::move(next));
  built_generation_ = generation;
  return snapshot_;
}

}  // namespace switchboard::webhook_server
