// Leader election over a coordination.k8s.io/v1 Lease, the way client-go's
// leaderelection does it:
//  - a candidate reads the Lease; it may take it when it is absent, has no
//    holder, or its record has not changed for leaseDuration as measured on
//    THIS replica's monotonic clock since it last saw a change (so clock skew
//    between replicas does not matter);
//  - every write carries the read resourceVersion: two candidates racing
//    cannot both win (the loser gets 409 Conflict);
//  - the leader renews every retryPeriod; when it has not renewed for
//    renewDeadline it stops leading (the callback must then stop all work:
//    the operator exits, so a restart starts as a clean standby);
//  - Release() (on SIGTERM) empties holderIdentity so a standby takes over at
//    once instead of waiting for the lease to expire.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "switchboard/common/status.h"

namespace switchboard::operator_controller {

// The part of a Lease the election uses.
struct LeaseRecord {
  std::string holder;  // spec.holderIdentity; "" = released
  int lease_duration_seconds = 0;
  std::string acquire_time;  // RFC 3339 with microseconds
  std::string renew_time;
  int transitions = 0;           // spec.leaseTransitions
  std::string resource_version;  // metadata.resourceVersion (for optimistic concurrency)
  bool operator==(const LeaseRecord& o) const {
    return holder == o.holder && lease_duration_seconds == o.lease_duration_seconds &&
           acquire_time == o.acquire_time && renew_time == o.renew_time &&
           transitions == o.transitions;
  }
};

// Reads and writes one Lease. The real one talks to the API server
// (kube_lease_store.h); tests may use an in-memory one.
class LeaseStore {
 public:
  virtual ~LeaseStore() = default;
  // NotFound when the Lease does not exist.
  virtual Result<LeaseRecord> Get() = 0;
  // AlreadyExists when someone created it first.
  virtual Status Create(const LeaseRecord& record) = 0;
  // Conflict when record.resource_version is stale.
  virtual Status Update(const LeaseRecord& record) = 0;
};

struct LeaderElectionConfig {
  std::string identity;
  std::chrono::milliseconds lease_duration{15000};
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
};

class LeaderElector {
 public:
  LeaderElector(LeaderElectionConfig config, std::unique_ptr<LeaseStore> store);
  ~LeaderElector();

  // Blocks until this replica leads (true) or Stop() is called (false).
  bool AcquireBlocking();
  // Renews until leadership is lost (returns false) or Stop() is called
  // (returns true). Call after AcquireBlocking() returned true, typically on
  // its own thread.
  bool RenewLoop();
  // Wakes AcquireBlocking/RenewLoop; they return soon after.
  void Stop();
  // Gives the lease up if we hold it (holder "" and a 1 s duration).
  Status Release();

  bool IsLeader() const { return leader_.load(); }
  const std::string& identity() const { return config_.identity; }

  // One attempt; true when we hold the lease afterwards. Public for tests.
  bool TryAcquireOrRenew();

 private:
  bool WaitFor(std::chrono::milliseconds d);  // false when stopped

  LeaderElectionConfig config_;
  std::unique_ptr<LeaseStore> store_;
  std::atomic<bool> leader_{false};
  std::optional<LeaseRecord> observed_;
  std::chrono::steady_clock::time_point observed_time_{};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopped_ = false;  // guarded by mu_
};

}  // namespace switchboard::operator_controller
