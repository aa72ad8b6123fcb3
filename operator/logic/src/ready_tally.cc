#include "switchboard/operator_logic/ready_tally.h"

#include "switchboard/operator_logic/conditions.h"
#include "switchboard/operator_logic/packed.h"

namespace switchboard::operator_logic {

ReadyState ReadyStateOf(const nlohmann::json& backend) {
  auto ready = ConditionOf(StatusOf(backend), condition_types::kReady);
  if (!ready) return {"Unknown", std::string(kNotReconciled)};
  return {ready->status, ready->reason};
}

void ReadyTally::Set(const std::string& key, const std::optional<ReadyState>& state) {
  auto it = by_key_.find(key);
  if (it != by_key_.end()) {
    if (state && it->second == *state) return;
    --counts_[it->second];
    if (state) {
      it->second = *state;
    } else {
      by_key_.erase(it);
    }
  } else if (state) {
    by_key_.emplace(key, *state);
  }
  if (state) ++counts_[*state];
}

}  // namespace switchboard::operator_logic
