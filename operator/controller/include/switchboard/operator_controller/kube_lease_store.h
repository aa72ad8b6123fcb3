// The LeaseStore of leader election on a real API server:
// coordination.k8s.io/v1 Lease `namespace/name`.
#pragma once

#include <memory>
#include <string>

#include "switchboard/kube/client.h"
#include "switchboard/operator_controller/leader_election.h"

namespace switchboard::operator_controller {

// `client` must outlive the store.
std::unique_ptr<LeaseStore> NewKubeLeaseStore(kube::Client* client, std::string ns,
                                              std::string name);

}  // namespace switchboard::operator_controller
