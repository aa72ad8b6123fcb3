#include "authorizer_checks.h"

namespace switchboard::operator_controller {

AuthorizerChecks::AuthorizerChecks(std::function<void(const std::string&)> on_done,
                                   Gatherer gatherer)
    : on_done_(std::move(on_done)), gatherer_(std::move(gatherer)) {
  thread_ = std::thread([this] { Run(); });
}

AuthorizerChecks::~AuthorizerChecks() { Stop(); }

void AuthorizerChecks::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void AuthorizerChecks::Submit(const std::string& key, std::string fingerprint,
                              pubsub::GatherOptions options) {
  {
    std::lock_guard lock(mu_);
    if (stop_ || busy_[key]) return;
    busy_[key] = true;
    queue_.emplace_back(key, std::move(fingerprint), std::move(options));
  }
  cv_.notify_one();
}

bool AuthorizerChecks::Busy(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = busy_.find(key);
  return it != busy_.end() && it->second;
}

std::optional<AuthorizerCheck> AuthorizerChecks::Latest(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = latest_.find(key);
  if (it == latest_.end()) return std::nullopt;
  return it->second;
}

void AuthorizerChecks::Forget(const std::string& key) {
  std::lock_guard lock(mu_);
  latest_.erase(key);
}

void AuthorizerChecks::Run() {
  for (;;) {
    std::tuple<std::string, std::string, pubsub::GatherOptions> item;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      item = std::move(queue_.front());
      queue_.pop_front();
    }
    auto& [key, fingerprint, options] = item;
    AuthorizerCheck check;
    check.fingerprint = std::move(fingerprint);
    check.replies = gatherer_(options);
    check.at = std::chrono::steady_clock::now();
    {
      std::lock_guard lock(mu_);
      latest_[key] = std::move(check);
      busy_.erase(key);
    }
    on_done_(key);
  }
}

}  // namespace switchboard::operator_controller
