// What the operator's /readyz says: a standby (--leader-elect, not leading)
// is ready, so a rollout proceeds while another replica leads; a leader is
// ready once every cache has its first list.
#pragma once

#include <string>

namespace switchboard::operator_controller {

class LeaderElector;

// "" when ready, else why not. `elector` may be null (no --leader-elect).
std::string ReadinessProblem(const LeaderElector* elector, bool synced);

}  // namespace switchboard::operator_controller
