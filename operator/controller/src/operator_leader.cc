#include "operator_leader.h"

#include <unistd.h>

#include <cstdlib>

#include "switchboard/common/log.h"
#include "switchboard/operator_controller/kube_lease_store.h"

namespace switchboard::operator_controller {

std::string LeaseNamespace(const Options& opts, const std::string& kubeconfig_namespace) {
  if (!opts.lease_namespace.empty()) return opts.lease_namespace;
  const char* pod_ns = std::getenv("POD_NAMESPACE");
  return pod_ns && *pod_ns ? pod_ns : kubeconfig_namespace;
}

std::string LeaseIdentity(const Options& opts) {
  if (!opts.identity.empty()) return opts.identity;
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  return std::string(host) + "_" + std::to_string(getpid());
}

Leadership::Leadership(const Options& opts, kube::Client* client,
                       const std::string& kubeconfig_namespace) {
  if (!opts.leader_elect) return;
  LeaderElectionConfig lc;
  lc.identity = LeaseIdentity(opts);
  lc.lease_duration = opts.lease_duration;
  lc.renew_deadline = opts.renew_deadline;
  lc.retry_period = opts.retry_period;
  elector_ = std::make_unique<LeaderElector>(
      lc, NewKubeLeaseStore(client, LeaseNamespace(opts, kubeconfig_namespace), opts.lease_name));
}

Leadership::~Leadership() {
  Stop();
  if (renewer_.joinable()) renewer_.join();
}

bool Leadership::Acquire(std::function<void()> on_lost) {
  if (!elector_) return true;
  if (!elector_->AcquireBlocking()) return false;  // stopped while standing by
  renewer_ = std::thread([this, on_lost = std::move(on_lost)] {
    if (!elector_->RenewLoop()) {
      lost_ = true;
      on_lost();
    }
  });
  return true;
}

void Leadership::Stop() {
  if (elector_) elector_->Stop();
}

void Leadership::Release() {
  if (!elector_) return;
  Stop();
  if (renewer_.joinable()) renewer_.join();
  if (lost_) return;
  Status s = elector_->Release();
  if (!s.ok()) log::Warn("operator", "could not release the lease", {{"error", s.ToString()}});
}

}  // namespace switchboard::operator_controller
