// AuthCallout mode: asking every NATS server of a NatsServer whether an
// authorizer is subscribed (pubsub::Gather of the system account's SUBSZ
// ping, operator_logic::DecideAuthorizerAvailability counts the replies),
// on one thread of its own: a gather waits its whole window (every server
// of a cluster answers, and nobody knows how many there are), which must
// not hold a reconcile worker. Shaped like the ProbePool: a reconcile
// submits and returns, `on_done(key)` enqueues the NatsServer again, which
// then reads the result; at most one check per key is queued or running,
// and a result is trusted only for the fingerprint it was taken for.
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "switchboard/common/status.h"
#include "switchboard/pubsub/gather.h"

namespace switchboard::operator_controller {

struct AuthorizerCheck {
  std::string fingerprint;
  Result<std::vector<std::string>> replies = std::vector<std::string>{};
  std::chrono::steady_clock::time_point at;
};

class AuthorizerChecks {
 public:
  using Gatherer = std::function<Result<std::vector<std::string>>(const pubsub::GatherOptions&)>;
  explicit AuthorizerChecks(std::function<void(const std::string&)> on_done,
                            Gatherer gatherer = pubsub::Gather);
  ~AuthorizerChecks();  // Stop()
  AuthorizerChecks(const AuthorizerChecks&) = delete;
  AuthorizerChecks& operator=(const AuthorizerChecks&) = delete;

  // Queues a check of server `key` unless one is queued or running.
  void Submit(const std::string& key, std::string fingerprint, pubsub::GatherOptions options);
  bool Busy(const std::string& key) const;
  std::optional<AuthorizerCheck> Latest(const std::string& key) const;
  void Forget(const std::string& key);
  void Stop();

 private:
  void Run();

  std::function<void(const std::string&)> on_done_;
  Gatherer gatherer_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  // guarded by mu_
  std::deque<std::tuple<std::string, std::string, pubsub::GatherOptions>> queue_;
  std::map<std::string, bool> busy_;               // guarded by mu_
  std::map<std::string, AuthorizerCheck> latest_;  // guarded by mu_
  std::thread thread_;
};

}  // namespace switchboard::operator_controller
