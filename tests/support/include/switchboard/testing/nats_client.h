// A raw nats.c client as an engine connects (user and password, a user
// JWT or nothing; no reconnects; the connect waits up to the deadline), for
// tests that watch what a nats-server does to one
// connection: the async errors it is sent (permission violations, an
// authorization violation) and its closing. And the fixture that keeps
// nats.c's library open for a suite's raw handles.
#pragma once

#include <gtest/gtest.h>
#include <nats/nats.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nats_handles.h"
#include "nats_library.h"

namespace switchboard::testing {

class NatsTestClient {
 public:
  // With `ca_pem`, over TLS trusting only that CA. Every wait below ends
  // after `deadline`.
  NatsTestClient(const std::string& url, const std::string& user, const std::string& password,
                 const std::string& ca_pem = "",
                 std::chrono::milliseconds deadline = std::chrono::seconds(15));
  // A user JWT instead of a password (operator mode: the system account's
  // and the authorizer's users): `sign` returns the raw ed25519 signature of
  // the server's nonce by the user's key. Called on nats.c's connecting
  // thread; kept until the connection is gone.
  struct UserJwt {
    std::string jwt;
    std::function<std::string(std::string_view nonce)> sign;
  };
  NatsTestClient(const std::string& url, UserJwt credentials,
                 std::chrono::milliseconds deadline = std::chrono::seconds(15));
  // No credentials (a server without authorization).
  explicit NatsTestClient(const std::string& url,
                          std::chrono::milliseconds deadline = std::chrono::seconds(15));
  // Closes and waits for the closed callback, which nats.c queues behind
  // every error callback it still owes (a failure when it does not come).
  ~NatsTestClient();
  NatsTestClient(const NatsTestClient&) = delete;
  NatsTestClient& operator=(const NatsTestClient&) = delete;

  bool connected() const { return nc_ != nullptr; }
  // The connect's status, and why it failed: "<status text>: <server's -ERR text>".
  natsStatus status() const { return status_; }
  const std::string& error() const { return error_; }

  // Subscribes (synchronously; in `queue` when not empty) and flushes, so
  // the server has it. One subscription per client: another replaces it.
  bool Subscribe(const std::string& subject, const std::string& queue = "");
  // Publishes and flushes.
  bool Publish(const std::string& subject, const std::string& data);
  // The next message's body on the subscription, "" after the deadline (or
  // `timeout`).
  std::string Next();
  std::string Next(std::chrono::milliseconds timeout);
  // The next message whole (its reply subject too), nothing after the
  // deadline.
  struct Message {
    std::string subject, reply, data;
  };
  std::optional<Message> NextMessage();
  // One request/reply; the reply's body, "" at the deadline.
  std::string Request(const std::string& subject, const std::string& body);
  // A request every server answers (the $SYS.REQ.CLAIMS.* family): the
  // bodies of the first `count` replies, fewer at the deadline.
  std::vector<std::string> RequestMany(const std::string& subject, const std::string& body,
                                       size_t count);
  natsConnection* connection() const { return nc_.get(); }
  // Waits until an async error's text contains `needle`.
  bool WaitForError(const std::string& needle);
  bool WaitClosed();
  std::vector<std::string> errors() const;

 private:
  static void OnError(natsConnection* nc, natsSubscription*, natsStatus err, void* closure);
  static void OnClosed(natsConnection*, void* closure);
  static natsStatus OnUserJwt(char** jwt, char** error, void* closure);
  static natsStatus OnSign(char** error, unsigned char** signature, int* length, const char* nonce,
                           void* closure);
  // Connects with the common options and `auth` (user and password, or a
  // user JWT).
  void Connect(const std::string& url, const std::string& ca_pem,
               const std::function<natsStatus(natsOptions*)>& auth);

  std::chrono::milliseconds deadline_;
  UserJwt user_jwt_;  // read by nats.c's callbacks while connecting; outlives nc_
  pubsub::internal::NatsConnectionPtr nc_;
  pubsub::internal::NatsSubscriptionPtr sub_;
  natsStatus status_ = NATS_ERR;
  std::string error_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false;              // guarded by mu_
  std::vector<std::string> errors_;  // guarded by mu_
};

// For a suite whose raw nats.c handles need the library open: the claim is
// released, and nats.c joined, once the suite's handles are gone.
class NatsLibraryTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite();
  static void TearDownTestSuite();

 private:
  static inline std::unique_ptr<pubsub::internal::NatsLibraryUse> library_;
};

}  // namespace switchboard::testing
