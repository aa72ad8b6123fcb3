// The LeaseStore of leader election on a real API server:
// coordination.k8s.io/v1 Lease `namespace/name`.
#pragma once

#include <memory>
#include <string>

#include "switchboard/controller/leader_election.h"
#include "switchboard/kube/client.h"

namespace switchboard::controller {

// `client` must outlive the store.
std::unique_ptr<LeaseStore> NewKubeLeaseStore(kube::Client* client, std::string ns,
                                              std::string name);

}  // namespace switchboard::controller
