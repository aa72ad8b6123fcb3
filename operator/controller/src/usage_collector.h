// Per-installation usage, collected by the operator's leader: it alone
// sees every NatsServer in both provisioning modes and every installation
// (the authorizer exists only in AuthCallout mode, runs as several
// replicas, and would each collect the same). Every
// operator_logic::kUsageInterval, for every NatsServer whose system user
// it knows (AuthCallout: the callout Secret's switchboard-system, in NATS
// operator mode its user JWT from the keys there; IncludeFile: the system
// Secret the render adds a user for), one round:
// UsageSource asks, operator_logic::UsageLedger folds, UsageMetrics
// exports, and each PubSubBackend's status.connections is written when it
// changed (operator_logic::ShouldWriteConnections).
//
// Threads: one of its own (Start/Stop; Stop joins it). RunOnce may be
// called instead, from one thread at a time (tests, the benchmark).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "switchboard/operator_logic/usage.h"
#include "switchboard/pubsub/nats_pubsub.h"
#include "usage_metrics.h"
#include "usage_source.h"

namespace switchboard::operator_controller {

struct ReconcileContext;

// One NatsServer to collect from.
struct UsageTarget {
  std::string key;                 // "<ns>/<name>" of the NatsServer
  pubsub::NatsOptions connection;  // as the system user
  std::string account;             // CONNZ's account filter ("" every account)
  bool statz = false;              // an account per installation
  operator_logic::UsageDirectory directory;
  // What the connection depends on (URL, user, a hash of the password,
  // CA): a new one reconnects.
  std::string fingerprint;
};

// The targets the caches describe now: every NatsServer whose system
// user's password (in operator mode: keys) the operator can read.
// `account_keys` (operator mode's derived installation accounts) is kept
// by the caller between calls; nullptr derives every key again.
std::vector<UsageTarget> UsageTargetsOf(const ReconcileContext& ctx,
                                        operator_logic::InstallationAccountCache* account_keys);

class UsageCollector {
 public:
  using Targets = std::function<std::vector<UsageTarget>()>;
  // The stored status.connections of a backend ("<ns>/<name>"), nullopt
  // when none (or no such backend).
  using StoredConnections = std::function<std::optional<int64_t>(const std::string&)>;
  // Writes status.connections; false when the write failed (tried again
  // next round).
  using WriteConnections = std::function<bool(const std::string&, int64_t)>;
  struct Options {
    std::chrono::milliseconds interval = operator_logic::kUsageInterval;
    std::chrono::milliseconds window{1000};  // replies to a ping are gathered this long
  };
  UsageCollector(UsageMetrics* metrics, Targets targets, StoredConnections stored,
                 WriteConnections write, Options options);
  ~UsageCollector();

  void Start();
  void Stop();
  // One round over every target.
  void RunOnce();
  // For tests: the ledger of NatsServer `key`, nullptr when none.
  const operator_logic::UsageLedger* LedgerOf(const std::string& key) const;

 private:
  struct PerServer {
    std::string fingerprint;
    std::unique_ptr<UsageSource> source;
    operator_logic::UsageLedger ledger;
  };
  UsageMetrics* metrics_;
  Targets targets_;
  StoredConnections stored_;
  WriteConnections write_;
  Options options_;
  // Touched by the collecting thread only (or RunOnce's caller).
  std::map<std::string, PerServer> servers_;
  std::map<std::string, std::chrono::steady_clock::time_point> last_write_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace switchboard::operator_controller
