// A stand-in for the authorizer in tests of auth callout against a real
// nats-server: one connection (a NatsTestClient, so a password or a user
// JWT) queue-subscribed on $SYS.REQ.USER.AUTH, which hands each request's
// token to the test's answer function and publishes what it returns on the
// request's reply subject. The test decides; the fixture owns the
// subscription, its teardown and the tally.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/testing/nats_client.h"

namespace switchboard::testing {

class CalloutResponder {
 public:
  // What the answer function decided for one request.
  struct Outcome {
    std::string reply;   // published on the reply subject unless empty
    std::string reason;  // counted (Count) unless empty, before the reply goes out
    std::string error;   // recorded (Errors) unless empty: the test fails on it
  };
  // Called on nats.c's threads, one request at a time per subscription;
  // must not throw.
  using Answer = std::function<Outcome(std::string_view request_token)>;

  // On `client`'s connection (ok() is false when it did not connect):
  // subscribes in the queue group "authorizers" and flushes, so the server
  // knows the responder before the constructor returns.
  CalloutResponder(std::unique_ptr<NatsTestClient> client, Answer answer,
                   std::chrono::milliseconds deadline = std::chrono::seconds(15));
  // Unsubscribes and waits until the last callback has returned (a test
  // failure when it does not within the deadline), then closes.
  ~CalloutResponder();
  CalloutResponder(const CalloutResponder&) = delete;
  CalloutResponder& operator=(const CalloutResponder&) = delete;

  bool ok() const { return ok_; }
  // The connection's error when it did not connect.
  const std::string& error() const { return client_->error(); }
  // Outcomes by reason ("allowed", "wrong password", ...).
  int Count(const std::string& reason) const;
  // Every Outcome::error so far, and "a request without a reply subject" or
  // a failed publish.
  std::vector<std::string> Errors() const;

 private:
  static void OnRequest(natsConnection* nc, natsSubscription*, natsMsg* msg, void* closure);
  static void OnComplete(void* closure);
  void Handle(natsConnection* nc, natsMsg* msg);
  void Fail(std::string what);

  std::unique_ptr<NatsTestClient> client_;
  Answer answer_;
  std::chrono::milliseconds deadline_;
  pubsub::internal::NatsSubscriptionPtr sub_;
  bool ok_ = false;

  mutable std::mutex mu_;
  std::condition_variable done_cv_;
  bool done_ = false;                  // guarded by mu_
  std::map<std::string, int> counts_;  // guarded by mu_
  std::vector<std::string> errors_;    // guarded by mu_
};

}  // namespace switchboard::testing
