#include "operator_health.h"

#include "switchboard/operator_controller/leader_election.h"

namespace switchboard::operator_controller {

std::string ReadinessProblem(const LeaderElector* elector, bool synced) {
  if (elector && !elector->IsLeader()) return "";  // a ready standby
  return synced ? "" : "caches not synced";
}

}  // namespace switchboard::operator_controller
