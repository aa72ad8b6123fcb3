#include "cluster_context.h"

#include "switchboard/common/log.h"

namespace switchboard::webhook_server {

ClusterContext::ClusterContext(kube::Client* client)
    : backends_(client, kube::resources::PubSubBackend(), ""),
      servers_(client, kube::resources::NatsServer(), ""),
      context_([this] {
        std::vector<kube::ObjectPtr> all = servers_.store().List();
        for (auto& o : backends_.store().List()) all.push_back(std::move(o));
        return all;
      }) {
  kube::StoreEventHandler bump;
  // A status write changes nothing the rules read, and a backend's other
  // changes are carried into the next snapshot alone: no relisting for them.
  bump.on_add = [this](const kube::ObjectPtr& o) { context_.Observe(nullptr, o.get()); };
  bump.on_update = [this](const kube::ObjectPtr& before, const kube::ObjectPtr& after) {
    context_.Observe(before.get(), after.get());
  };
  bump.on_delete = [this](const kube::ObjectPtr& o) { context_.Observe(o.get(), nullptr); };
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
  return context_.Snapshot();
}

}  // namespace switchboard::webhook_server
