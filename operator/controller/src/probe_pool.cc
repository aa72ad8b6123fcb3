#include "probe_pool.h"

#include "switchboard/operator_logic/conditions.h"
#include "switchboard/operator_logic/time_util.h"

namespace switchboard::operator_controller {

ProbePool::ProbePool(int threads, std::function<void(const std::string&)> on_done,
                     std::function<void(const std::string&)> observe, Prober prober)
    : on_done_(std::move(on_done)), observe_(std::move(observe)), prober_(std::move(prober)) {
  for (int i = 0; i < std::max(1, threads); i++) threads_.emplace_back([this] { Run(); });
}

ProbePool::~ProbePool() { Stop(); }

void ProbePool::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void ProbePool::Submit(const std::string& key, ProbeJob job) {
  {
    std::lock_guard lock(mu_);
    if (stop_ || busy_[key]) return;
    busy_[key] = true;
    queue_.emplace_back(key, std::move(job));
  }
  cv_.notify_one();
}

bool ProbePool::Busy(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = busy_.find(key);
  return it != busy_.end() && it->second;
}

std::optional<ProbeOutcome> ProbePool::Latest(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = latest_.find(key);
  if (it == latest_.end()) return std::nullopt;
  return it->second;
}

void ProbePool::Forget(const std::string& key) {
  std::lock_guard lock(mu_);
  latest_.erase(key);
}

void ProbePool::Run() {
  for (;;) {
    std::pair<std::string, ProbeJob> item;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      item = std::move(queue_.front());
      queue_.pop_front();
    }
    ProbeOutcome out;
    out.fingerprint = item.second.fingerprint;
    auto r = prober_(item.second.primary);
    if (r.ok()) {
      out.max_payload = r->server_max_payload;
    } else {
      out.primary = r.status();
      const auto code = r.status().code();
      if (item.second.fallback &&
          (code == StatusCode::kUnauthenticated || code == StatusCode::kPermissionDenied ||
           code == StatusCode::kTimeout)) {
        auto f = prober_(*item.second.fallback);
        if (f.ok()) {
          out.fallback_ok = true;
          out.max_payload = f->server_max_payload;
        }
      }
    }
    if (observe_) {
      observe_(r.ok() ? std::string(operator_logic::reasons::kProbed)
                      : std::string(operator_logic::ProbeFailureReason(r.status().code(), false)));
    }
    out.time = operator_logic::FormatTime(operator_logic::Clock::now());
    out.at = std::chrono::steady_clock::now();
    {
      std::lock_guard lock(mu_);
      latest_[item.first] = std::move(out);
      busy_.erase(item.first);
    }
    on_done_(item.first);
  }
}

}  // namespace switchboard::operator_controller
