#include "switchboard/operator_controller/kube_lease_store.h"

namespace switchboard::operator_controller {
namespace {

using kube::json;

class KubeLeaseStore : public LeaseStore {
 public:
  KubeLeaseStore(kube::Client* client, std::string ns, std::string name)
      : client_(client), ns_(std::move(ns)), name_(std::move(name)) {}

  Result<LeaseRecord> Get() override {
    auto obj = client_->Get(kube::resources::Lease(), ns_, name_, Call());
    if (!obj.ok()) return obj.status();
    const json& spec = (*obj)["spec"];
    LeaseRecord r;
    r.holder = spec.value("holderIdentity", "");
    r.lease_duration_seconds = spec.value("leaseDurationSeconds", 0);
    r.acquire_time = spec.value("acquireTime", "");
    r.renew_time = spec.value("renewTime", "");
    r.transitions = spec.value("leaseTransitions", 0);
    r.resource_version = kube::ResourceVersionOf(*obj);
    return r;
  }

  Status Create(const LeaseRecord& r) override {
    return client_->Create(kube::resources::Lease(), ToObject(r), {}, Call()).status();
  }

  Status Update(const LeaseRecord& r) override {
    return client_->Update(kube::resources::Lease(), ToObject(r), {}, Call()).status();
  }

 private:
  // A renewal that takes longer than a few seconds is as good as failed.
  static kube::CallOptions Call() {
    kube::CallOptions c;
    c.timeout = std::chrono::seconds(5);
    return c;
  }

  json ToObject(const LeaseRecord& r) const {
    json spec = {{"holderIdentity", r.holder},
                 {"leaseDurationSeconds", r.lease_duration_seconds},
                 {"leaseTransitions", r.transitions}};
    if (!r.acquire_time.empty()) spec["acquireTime"] = r.acquire_time;
    if (!r.renew_time.empty()) spec["renewTime"] = r.renew_time;
    json meta = {{"name", name_}, {"namespace", ns_}};
    if (!r.resource_version.empty()) meta["resourceVersion"] = r.resource_version;
    return {{"apiVersion", "coordination.k8s.io/v1"},
            {"kind", "Lease"},
            {"metadata", meta},
            {"spec", spec}};
  }

  kube::Client* client_;
  std::string ns_;
  std::string name_;
};

}  // namespace

std::unique_ptr<LeaseStore> NewKubeLeaseStore(kube::Client* client, std::string ns,
                                              std::string name) {
  return std::make_unique<KubeLeaseStore>(client, std::move(ns), std::move(name));
}

}  // namespace switchboard::operator_controller
