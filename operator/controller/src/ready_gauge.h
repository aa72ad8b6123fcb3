// switchboard_pubsubbackends: the backends cache's events kept in an
// operator_logic::ReadyTally, published to the Metrics after each change.
// Only the counts of states that changed are set; a state once seen keeps
// its series (0 when nobody holds it). Handler() may be called from any
// informer thread (a MultiStore runs one per namespace): a mutex serialises
// them.
#pragma once

#include <mutex>

#include "switchboard/kube/store.h"
#include "switchboard/operator_controller/metrics.h"
#include "switchboard/operator_logic/ready_tally.h"

namespace switchboard::operator_controller {

class ReadyGauge {
 public:
  // `metrics` must outlive the handler's last call.
  explicit ReadyGauge(Metrics* metrics) : metrics_(metrics) {}
  // The handler to add to the backends cache before it starts.
  kube::StoreEventHandler Handler();

 private:
  void Observe(const nlohmann::json* after, const nlohmann::json& any);
  Metrics* metrics_;
  std::mutex mu_;
  operator_logic::ReadyTally tally_;  // guarded by mu_
};

}  // namespace switchboard::operator_controller
