#include "authorizer_checks.h"

#include "switchboard/pubsub/nats_client.h"

namespace switchboard::operator_controller {

Result<std::vector<std::string>> Ping(const PingRequest& request) {
  auto client = pubsub::NatsClient::Connect(request.connection);
  if (!client.ok()) return client.status();
  return (*client)->RequestAll(request.subject, request.body, request.window);
}

AuthorizerChecks::AuthorizerChecks(std::function<void(const std::string&)> on_done, Pinger pinger)
    : KeyedJobs(
          1,
          [pinger = std::move(pinger)](const AuthorizerCheckJob& job) {
            Ran ran;
            ran.outcome.fingerprint = job.fingerprint;
            ran.outcome.replies = pinger(job.request);
            ran.outcome.at = std::chrono::steady_clock::now();
            return ran;
          },
          std::move(on_done)) {}

}  // namespace switchboard::operator_controller
