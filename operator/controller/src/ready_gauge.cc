#include "ready_gauge.h"

#include "switchboard/kube/resource.h"

namespace switchboard::operator_controller {

kube::StoreEventHandler ReadyGauge::Handler() {
  kube::StoreEventHandler h;
  h.on_add = [this](const kube::ObjectPtr& o) { Observe(o.get(), *o); };
  h.on_update = [this](const kube::ObjectPtr&, const kube::ObjectPtr& o) { Observe(o.get(), *o); };
  h.on_delete = [this](const kube::ObjectPtr& o) { Observe(nullptr, *o); };
  return h;
}

void ReadyGauge::Observe(const nlohmann::json* after, const nlohmann::json& any) {
  std::optional<operator_logic::ReadyState> state;
  if (after) state = operator_logic::ReadyStateOf(*after);
  const std::string key = kube::ObjectKeyOf(any);
  std::lock_guard lock(mu_);
  const auto before = tally_.Counts();
  tally_.Set(key, state);
  for (const auto& [s, n] : tally_.Counts()) {
    auto it = before.find(s);
    if (it == before.end() || it->second != n) metrics_->SetBackends(s.status, s.reason, n);
  }
}

}  // namespace switchboard::operator_controller
