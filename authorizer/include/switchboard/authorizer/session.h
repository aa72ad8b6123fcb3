// The authorizer's work for one NatsServer: a NATS connection as
// api::kAuthorizerUsername to every server of the cluster (members.h: the
// seeds of spec.url plus the client URLs the servers announce, one
// connection per server, each pinned to its server's URL) with a queue
// subscription on $SYS.REQ.USER.AUTH (group api::kAuthorizerQueueGroup) on
// each, request workers that answer each request from the current
// ServedServer snapshot (AnswerRequest) on the connection it came on, and
// the sweep: as api::kCalloutSystemUsername, CONNZ of the account on every
// server of the cluster, ConnectionsToClose, KICK. The sweep's connection
// (to the seeds, failing over like any client) is also where the announced
// URLs are read.
//
// Connecting never gives up: a member whose connect failed is retried
// every `reconnect_wait`, nats.c reconnects a live member to its own server
// forever, and a member nats.c closed for good is replaced. Thread-safe;
// the destructor drains (unsubscribes every member, answers what was
// queued, closes).
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "switchboard/authorizer/metrics.h"
#include "switchboard/authorizer/served.h"
#include "switchboard/pubsub/nats_client.h"

namespace switchboard::authorizer {

struct SessionOptions {
  int request_workers = 4;
  std::chrono::milliseconds sweep_interval{30000};
  // A connection is closed only when two sweeps at least this far apart
  // both found it unaccepted: a replica whose cache is behind another's
  // (which already let a new installation in) must not close it.
  std::chrono::milliseconds kick_after{3000};
  std::chrono::milliseconds reconnect_wait{2000};
  // A member whose server is neither a seed nor announced, and that is not
  // connected, is closed after this long (a restarting server is
  // unannounced while it is down; its member waits for it).
  std::chrono::milliseconds forget_server_after{30000};
  std::chrono::milliseconds connect_timeout{5000};
  // How long a sweep collects the servers' answers to PING.CONNZ.
  std::chrono::milliseconds gather_wait{1000};
  size_t max_queued_requests = 10000;  // beyond: dropped (the server times the client out)
  std::function<operator_logic::Time()> clock = [] { return operator_logic::Clock::now(); };
  operator_logic::CredentialDeps credential_deps;
};

// One member: the connection to one server.
struct MemberHealth {
  std::string url;
  std::string server_id;  // the server it is connected to; "" while not connected
  bool subscribed = false;
  // Logged in as the other isolation's authorizer (LoginsOf): its server
  // has not restarted since a switch of isolation.
  bool other_isolation = false;
  std::string error;  // its last connect/subscribe failure ("" once it works)
};

struct SessionHealth {
  bool attempted = false;   // a connect has been tried (succeeded or not)
  bool connected = false;   // at least one member is connected
  bool subscribed = false;  // ... and every connected member's queue subscription is on its server
  int servers = 0;          // distinct servers with a subscribed member
  int other_isolation = 0;  // ... of which logged in with the other isolation's login
  std::vector<MemberHealth> members;  // by URL
  std::string error;                  // the last connect/subscribe/sweep failure ("" once it works)
  // No member is connected and the last connect failed in TLS (handshake, or the certificate does
  // not verify with the CA): not a network fault that another replica may not have, but a CA or
  // certificate every replica shares.
  bool tls_failed = false;
};

class ServerSession {
 public:
  // `metrics` may be null; it must outlive the session.
  ServerSession(std::shared_ptr<const ServedServer> served, SessionOptions options,
                Metrics* metrics);
  ~ServerSession();
  ServerSession(const ServerSession&) = delete;
  ServerSession& operator=(const ServerSession&) = delete;

  // A new snapshot with the same connections (ServedServer::SameConnections;
  // otherwise replace the session). Sweeps soon when it narrows access.
  void Update(std::shared_ptr<const ServedServer> served);
  std::shared_ptr<const ServedServer> served() const;
  void RequestSweep();
  SessionHealth Health() const;
  // Sweeps completed (successful or not): for tests to wait on.
  int Sweeps() const;
  int Kicks() const;

 private:
  struct Member;
  struct Request {
    std::shared_ptr<pubsub::NatsClient> client;  // the connection it came on
    std::shared_ptr<const OperatorMode> login;   // ... and its login (LoginsOf)
    std::string reply, data;
    std::chrono::steady_clock::time_point received;
  };
  void Loop();
  void Work();
  void Answer(const Request& r);
  void PlanMembers();
  void EnsureSubscribed(const std::string& url);
  void RemoveMember(const std::string& url);
  void EnsureSystem();
  Status Sweep();
  // As `who`, in the isolation of `mode` (null: config mode).
  pubsub::NatsOptions ConnectOptions(const operator_logic::Credentials& who,
                                     const std::string& name,
                                     const std::shared_ptr<const OperatorMode>& mode);
  // Connects as `who` with the first of LoginsOf(served) the server takes
  // and sets `login` to it (to `pinned_url` only, when not empty). A
  // failure that is not a refusal (nothing listening, TLS) ends the tries;
  // when all fail, the first login's error.
  Result<std::unique_ptr<pubsub::NatsClient>> ConnectAs(const operator_logic::Credentials& who,
                                                        const std::string& name,
                                                        const std::string& pinned_url,
                                                        std::shared_ptr<const OperatorMode>& login);
  void Wake();

  const SessionOptions options_;
  Metrics* const metrics_;
  std::string ns_, name_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;                       // guarded by mu_
  bool sweep_requested_ = false;                // guarded by mu_
  std::shared_ptr<const ServedServer> served_;  // guarded by mu_
  // By URL; added and removed by the loop thread only.
  std::map<std::string, std::unique_ptr<Member>> members_;  // guarded by mu_
  std::map<std::string, std::string> aliases_;              // loop thread only
  std::unique_ptr<pubsub::NatsClient> system_;              // loop thread only
  std::shared_ptr<const OperatorMode> system_login_;        // system_'s login; loop thread only
  std::chrono::steady_clock::time_point next_system_connect_{};                // loop thread only
  std::map<std::pair<std::string, uint64_t>, operator_logic::Time> suspects_;  // loop thread only
  // Operator mode: "<ns>/<name>" -> the installation's account key, as
  // derived for the keys of `account_keys_of_` (a derivation is an HMAC
  // and a key pair: done once per installation). Loop thread only.
  std::map<std::string, std::string> account_keys_;
  std::shared_ptr<const OperatorMode> account_keys_of_;
  SessionHealth health_;        // guarded by mu_
  int sweeps_ = 0, kicks_ = 0;  // guarded by mu_

  std::mutex qmu_;
  std::condition_variable qcv_;
  std::deque<Request> queue_;  // guarded by qmu_
  bool draining_ = false;      // guarded by qmu_

  std::vector<std::thread> workers_;
  std::thread loop_;
};

}  // namespace switchboard::authorizer
