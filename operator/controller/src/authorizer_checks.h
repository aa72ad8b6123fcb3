// AuthCallout mode: asking every NATS server of a NatsServer whether an
// authorizer is subscribed (the system account's SUBSZ ping through
// pubsub::NatsClient::RequestAll; operator_logic::DecideAuthorizerAvailability
// counts the replies), on one thread of its own: a ping waits its whole
// window (every server of a cluster answers, and nobody knows how many
// there are), which must not hold a reconcile worker. A KeyedJobs
// (keyed_jobs.h, the contract the probes share); a check is final after one
// run: the next is the reconcile's to ask for.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "keyed_jobs.h"
#include "switchboard/common/status.h"
#include "switchboard/pubsub/nats_pubsub.h"

namespace switchboard::operator_controller {

// One request that every server answers, as the system user.
struct PingRequest {
  pubsub::NatsOptions connection;  // urls, credentials, TLS
  std::string subject, body;
  std::chrono::milliseconds window{1000};  // every reply within it counts
};
// Connects, asks, keeps the replies of `window`, closes.
Result<std::vector<std::string>> Ping(const PingRequest& request);

struct AuthorizerCheckJob {
  std::string fingerprint;
  PingRequest request;
};

struct AuthorizerCheck {
  std::string fingerprint;
  Result<std::vector<std::string>> replies = std::vector<std::string>{};
  std::chrono::steady_clock::time_point at;
};

class AuthorizerChecks : public KeyedJobs<AuthorizerCheckJob, AuthorizerCheck> {
 public:
  using Pinger = std::function<Result<std::vector<std::string>>(const PingRequest&)>;
  explicit AuthorizerChecks(std::function<void(const std::string&)> on_done, Pinger pinger = Ping);

  using KeyedJobs::Submit;
  void Submit(const std::string& key, std::string fingerprint, PingRequest request) {
    Submit(key, AuthorizerCheckJob{std::move(fingerprint), std::move(request)});
  }
};

}  // namespace switchboard::operator_controller
