#include "switchboard/operator_controller/leader_election.h"

#include "switchboard/common/log.h"
#include "switchboard/common/rfc3339.h"

namespace switchboard::operator_controller {

namespace {

// Lease times are metav1.MicroTime.
std::string MicroTimeNow() {
  return rfc3339::Format(std::chrono::system_clock::now(), rfc3339::Fraction::kMicros);
}

}  // namespace

LeaderElector::LeaderElector(LeaderElectionConfig config, std::unique_ptr<LeaseStore> store)
    : config_(std::move(config)), store_(std::move(store)) {}

LeaderElector::~LeaderElector() { Stop(); }

bool LeaderElector::WaitFor(std::chrono::milliseconds d) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, d, [this] { return stopped_; });
  return !stopped_;
}

void LeaderElector::Stop() {
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
  }
  cv_.notify_all();
}

bool LeaderElector::TryAcquireOrRenew() {
  const auto now = std::chrono::steady_clock::now();
  const int duration_s = static_cast<int>(
      std::chrono::duration_cast<std::chrono::seconds>(config_.lease_duration).count());
  LeaseRecord desired;
  desired.holder = config_.identity;
  desired.lease_duration_seconds = duration_s < 1 ? 1 : duration_s;
  desired.renew_time = MicroTimeNow();
  desired.acquire_time = desired.renew_time;

  auto current = store_->Get();
  if (!current.ok()) {
    if (current.status().code() != StatusCode::kNotFound) {
      log::Warn("leader-election", "cannot read lease", {{"error", current.status().ToString()}});
      return false;
    }
    Status s = store_->Create(desired);
    if (!s.ok()) {
      log::Info("leader-election", "lease create lost", {{"error", s.ToString()}});
      return false;
    }
    observed_ = desired;
    observed_time_ = now;
    return true;
  }

  // A changed record (someone renewed) restarts our view of its expiry.
  if (!observed_ || !(*observed_ == *current)) {
    observed_ = *current;
    observed_time_ = now;
  }
  const bool we_hold = current->holder == config_.identity;
  const auto held_for = std::chrono::seconds(current->lease_duration_seconds);
  if (!current->holder.empty() && !we_hold && observed_time_ + held_for > now) {
    return false;  // someone else holds a live lease
  }
  if (we_hold) {
    desired.acquire_time = current->acquire_time;
    desired.transitions = current->transitions;
  } else {
    desired.transitions = current->transitions + 1;
  }
  desired.resource_version = current->resource_version;
  Status s = store_->Update(desired);
  if (!s.ok()) {
    log::Info("leader-election", "lease update failed", {{"error", s.ToString()}});
    return false;
  }
  observed_ = desired;
  observed_time_ = now;
  return true;
}

bool LeaderElector::AcquireBlocking() {
  log::Info("leader-election", "waiting for leadership", {{"identity", config_.identity}});
  while (true) {
    if (TryAcquireOrRenew()) {
      leader_ = true;
      log::Info("leader-election", "became leader", {{"identity", config_.identity}});
      return true;
    }
    if (!WaitFor(config_.retry_period)) return false;
  }
}

bool LeaderElector::RenewLoop() {
  auto last_renew = std::chrono::steady_clock::now();
  while (WaitFor(config_.retry_period)) {
    if (TryAcquireOrRenew()) {
      last_renew = std::chrono::steady_clock::now();
      continue;
    }
    if (std::chrono::steady_clock::now() - last_renew >= config_.renew_deadline) {
      leader_ = false;
      log::Error("leader-election", "lost leadership: could not renew within the renew deadline",
                 {{"identity", config_.identity}});
      return false;
    }
  }
  return true;
}

Status LeaderElector::Release() {
  if (!leader_) return Status::Ok();
  auto current = store_->Get();
  if (!current.ok()) return current.status();
  if (current->holder != config_.identity) {
    leader_ = false;
    return Status::Ok();
  }
  LeaseRecord released = *current;
  released.holder = "";
  released.lease_duration_seconds = 1;
  released.renew_time = MicroTimeNow();
  Status s = store_->Update(released);
  if (s.ok()) {
    leader_ = false;
    log::Info("leader-election", "released leadership", {{"identity", config_.identity}});
  }
  return s;
}

}  // namespace switchboard::operator_controller
