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
// Threads: `Answer` and the destructor from any one thread at a time; the
// handler runs on the subscription's nats.c thread. Destroying it returns
// once no handler call runs and none will start, then closes the
// connection.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

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
  static Result<std::unique_ptr<AccountLookups>> Start(const pubsub::NatsOptions& connection,
                                                       std::string_view operator_seed,
                                                       std::string fingerprint);
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

 private:
  AccountLookups(natsauth::KeyPair op, std::string fingerprint);
  void OnLookup(const pubsub::RawMessage& m);

  const natsauth::KeyPair operator_key_;
  const std::string fingerprint_;
  std::mutex mu_;
  // account key -> {AccountContent, its JWT}; guarded by mu_.
  std::map<std::string, std::pair<std::string, std::string>> answers_;
  std::atomic<uint64_t> answered_{0};
  bool filled_ = false;  // Answer has run once; only Answer touches it
  std::unique_ptr<pubsub::NatsClient> client_;
  std::unique_ptr<pubsub::Subscription> sub_;  // last: destroyed first, before client_
};

}  // namespace switchboard::operator_controller
