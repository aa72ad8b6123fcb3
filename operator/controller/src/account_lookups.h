// AuthCallout with isolation: Accounts (NATS operator mode): answering the
// NATS servers' own account lookups from what is desired, so that an
// account missing from a server's resolver store (every store emptied by a
// whole-cluster restart) never refuses a client.
//
// Why: a full resolver that cannot find an account a connect needs (the
// callout's answer names the installation's account) does not refuse at
// once. It sends $SYS.REQ.ACCOUNT.<key>.CLAIMS.LOOKUP from its own inbox to
// the system account, takes the first reply with a JWT from any responder,
// verifies it against the operator (nats-server server/accounts.go
// DirAccResolver.Fetch, Server.fetch; server/server.go verifyAccountClaims)
// and stores it. Its peers reply from their stores, and an empty reply
// from each peer it knows of ends the wait with "not found". So one
// connection of the system account's user, subscribed to those lookups and
// answering with the account JWT of the desired claims (signed here, with
// the operator key, which stays in the operator), gives the server its
// account while the client waits. It also pushes the JWT
// ($SYS.REQ.CLAIMS.UPDATE, no reply asked): if its reply came after every
// peer's empty one, every store holds the account by the client's next
// attempt, and the next lookup of it never happens.
//
// What it answers is replaced by each AccountSyncs run (`Answer`), from the
// desired accounts that run was given: cluster state, never what was
// pushed. Lookups a client sends (their reply is a client inbox) are left
// to the servers: the sync reads what the stores hold with them.
//
// After every reconnect it pushes every account it answers for, at once.
// The server it is on now may be a new process with an empty store (a
// whole-cluster restart), and a reply to a lookup comes too late when the
// peers' empty replies come first: the client is refused, and Hatchet's
// engine (nats.go) gives up after the same refusal twice from one server.
// With every account in one store, any server's lookup is answered by
// that peer, so no client waits for the next sync run. A reconnect to a
// server that kept its store costs it one comparison per account.
//
// Threads: `Answer` and the destructor from any one thread at a time; the
// handler runs on the subscription's nats.c thread, the push after a
// reconnect on a thread of its own. Destroying it returns once neither
// runs and none will start, then closes the connection.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "switchboard/common/status.h"
#include "switchboard/natsauth/nkey.h"
#include "switchboard/natsauth/operator_jwt.h"
#include "switchboard/pubsub/nats_client.h"

namespace switchboard::operator_controller {

class AccountLookups {
 public:
  // Connects as `connection` says (the system account's user; reconnects
  // forever) and subscribes to every account lookup. `operator_seed` signs
  // the answers; a secret, never logged. `fingerprint` names what the
  // connection is for (URLs, CA, keys): a run with another one replaces it.
  // `key` names the NatsServer in logs.
  static Result<std::unique_ptr<AccountLookups>> Start(const pubsub::NatsOptions& connection,
                                                       std::string_view operator_seed,
                                                       std::string fingerprint, std::string key);
  ~AccountLookups();
  AccountLookups(const AccountLookups&) = delete;
  AccountLookups& operator=(const AccountLookups&) = delete;

  // From now on, answers for exactly these accounts (by account key). Signs
  // only what is new or changed, and pushes that to every store at once
  // (except on the first call, which fills it). The first error to sign or
  // push, if any; the other accounts are answered anyway.
  Status Answer(const std::map<std::string, natsauth::AccountClaims>& desired);

  const std::string& fingerprint() const { return fingerprint_; }
  // Lookups answered since the last call (and reset to 0).
  uint64_t TakeAnswered() { return answered_.exchange(0); }
  // Times every answered account was pushed after a reconnect.
  uint64_t PushesAfterReconnect() const { return pushes_after_reconnect_.load(); }

 private:
  AccountLookups(natsauth::KeyPair op, std::string fingerprint, std::string key);
  void OnLookup(const pubsub::RawMessage& m);
  // The reconnect callback (nats.c's thread): wakes PushAfterReconnects.
  void Reconnected();
  // The pusher thread: after each reconnect, every answer to every store.
  void PushAfterReconnects();

  const natsauth::KeyPair operator_key_;
  const std::string fingerprint_;
  const std::string key_;
  std::mutex mu_;
  // account key -> {AccountContent, its JWT}; guarded by mu_.
  std::map<std::string, std::pair<std::string, std::string>> answers_;
  std::atomic<uint64_t> answered_{0};
  bool filled_ = false;  // Answer has run once; only Answer touches it
  std::atomic<uint64_t> pushes_after_reconnect_{0};
  // The pusher's wake-ups; declared before client_, whose callbacks use
  // them until it is destroyed.
  std::mutex push_mu_;
  std::condition_variable push_cv_;
  bool push_wanted_ = false, stopping_ = false;  // guarded by push_mu_
  std::atomic<bool> stop_pushing_{false};        // ends a push under way
  std::thread pusher_;                           // joined before client_ goes
  // Set once by Start under push_mu_; reset by the destructor.
  std::unique_ptr<pubsub::NatsClient> client_;
  std::unique_ptr<pubsub::Subscription> sub_;  // last: destroyed first, before client_
};

}  // namespace switchboard::operator_controller
