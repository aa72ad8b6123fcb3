// AuthCallout with isolation: Accounts (NATS operator mode): bringing every
// NATS server's full account resolver in line with the installations, off
// the reconcile workers (each run waits for every server's answer). One run
// of one NatsServer connects as the system account's user and:
// - asks every server whether an authorizer is subscribed (the same SUBSZ
//   ping as AuthCallout's AuthorizerChecks: one connection for both);
// - lists what each server's resolver holds ($SYS.REQ.CLAIMS.LIST); an
//   account counts as stored only when every server that answered lists it;
// - plans with operator_logic::PlanAccountSync, looks up
//   ($SYS.REQ.ACCOUNT.<key>.CLAIMS.LOOKUP) what the plan asks for, plans
//   again, pushes ($SYS.REQ.CLAIMS.UPDATE) and deletes
//   ($SYS.REQ.CLAIMS.DELETE, signed by the operator key).
// - keeps a second connection open (AccountLookups, account_lookups.h)
//   that answers the servers' own lookups of missing accounts from the
//   run's desired accounts, so a client never waits for the next run after
//   a whole-cluster restart emptied every store.
// Level-based: a run needs nothing from earlier runs. What it remembers
// (per server, the account contents a resolver confirmed) only spares
// lookups: an account that every server lists with content this process
// pushed or looked up is not looked up again. Forget drops it.
//
// A KeyedJobs (keyed_jobs.h): a run is final; the reconcile submits the
// next one (RetryTiming::account_resync after one that went through,
// account_sync_retry after a failure, at once when what is desired
// changes).
//
// The last submitted desired accounts are the one truth both halves read,
// whatever run is under way: Submit has the servers' lookups answered for
// them at once (a new installation's first connect need not wait for a
// run), and a run deletes from the stores only what they no longer name (a
// run begun for older ones never deletes an account desired since, which
// the lookups may have pushed meanwhile).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "account_lookups.h"
#include "keyed_jobs.h"
#include "switchboard/common/status.h"
#include "switchboard/natsauth/operator_jwt.h"
#include "switchboard/pubsub/nats_pubsub.h"

namespace switchboard::operator_controller {

// By account key: every installation account a NatsServer's servers should
// hold, as its reconcile computed them.
using DesiredAccounts = std::map<std::string, natsauth::AccountClaims>;

struct AccountSyncJob {
  std::string server_key;  // "<ns>/<name>" of the NatsServer
  // What the run is for: the connection, the keys and every desired
  // account's content (never a seed: a hash).
  std::string fingerprint;
  pubsub::NatsOptions connection;  // urls, TLS, the system user's JWT
  // The answering connection's (the same user, reconnecting sooner), and
  // what it is for (URLs, CA, keys: never a seed).
  pubsub::NatsOptions lookups_connection;
  std::string lookups_fingerprint;
  std::string operator_seed;                       // signs deletions; a secret, never logged
  std::shared_ptr<const DesiredAccounts> desired;  // never null
  std::set<std::string> keep;                      // never deleted: the system and auth accounts
  std::string ping_subject, ping_body;
  std::chrono::milliseconds window{1000};  // every server's answer within it counts
  std::chrono::milliseconds request_timeout{2000};
};

struct AccountSyncOutcome {
  std::string fingerprint;
  // OK: every account was stored as desired by the run's end (as far as
  // the servers that answered tell). Otherwise what failed; never a secret.
  Status status;
  // The SUBSZ ping's replies (operator_logic::DecideAuthorizerAvailability).
  Result<std::vector<std::string>> authorizer_replies = std::vector<std::string>{};
  int servers = 0;  // that answered CLAIMS.LIST
  int pushed = 0, removed = 0, looked_up = 0;
  std::chrono::steady_clock::time_point at;
};

class AccountSyncs {
 public:
  // on_done(key) when a run's outcome is final (the server is enqueued).
  explicit AccountSyncs(std::function<void(const std::string&)> on_done);
  ~AccountSyncs();

  // Queues a run (KeyedJobs::Submit) and, when the key's lookups are
  // answered already, answers them for job.desired from now on (and pushes
  // what is new). Returns the accounts job.desired adds to the key's last
  // submission (none on the first): their installations, which waited in
  // MayHandOut, may now hand out their credentials.
  std::vector<std::string> Submit(const std::string& key, AccountSyncJob job);
  // Whether an installation of the key may hand out its credentials now:
  // its account is in the last submission (its lookups are answered, and
  // it is pushed or the next run pushes it), or there is nothing to wait
  // for (nothing submitted yet, or the last run failed: the probe then
  // reports what is wrong).
  bool MayHandOut(const std::string& key, const std::string& account) const;
  std::optional<AccountSyncOutcome> Latest(const std::string& key) const {
    return jobs_.Latest(key);
  }
  // Drops the key's outcome, its confirmations and its AccountLookups.
  void Forget(const std::string& key);
  // Joins the run thread, then closes every AccountLookups.
  void Stop();

 private:
  struct Confirmed;  // per server key: account -> content last confirmed
  AccountSyncOutcome RunOnce(const AccountSyncJob& job);
  // The key's AccountLookups for the job's fingerprint, connected now if
  // there is none or it is for another; null when it cannot connect or the
  // key was forgotten meanwhile.
  std::shared_ptr<AccountLookups> LookupsFor(const AccountSyncJob& job);
  // Has `lookups` answer for the key's last submitted desired accounts.
  // Serialised, so the last call leaves the last submission in place.
  Status AnswerLatest(const std::string& key, AccountLookups& lookups);
  // `remove` without what the key's last submission desires.
  std::vector<std::string> StillUndesired(const std::string& key, std::vector<std::string> remove);

  std::shared_ptr<Confirmed> confirmed_;
  mutable std::mutex lookups_mu_;
  // By server key; guarded by lookups_mu_. Only keys submitted and not
  // forgotten since (`wanted_`) get one.
  std::map<std::string, std::shared_ptr<AccountLookups>> lookups_;
  std::set<std::string> wanted_;
  // By server key, the last submitted desired accounts; guarded by
  // lookups_mu_.
  std::map<std::string, std::shared_ptr<const DesiredAccounts>> latest_;
  std::mutex answer_mu_;  // held across AnswerLatest; taken before lookups_mu_
  KeyedJobs<AccountSyncJob, AccountSyncOutcome> jobs_;  // last: its threads use the above
};

// One account's content as PlanAccountSync compares it, for fingerprints.
std::string AccountContent(const natsauth::AccountClaims& claims);

}  // namespace switchboard::operator_controller
