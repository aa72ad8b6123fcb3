// Per-installation usage of a NatsServer, from what its servers' system
// account answers: the requests as text, the replies read into plain
// structs, and a ledger that folds one collection round into figures per
// (installation, server). Pure: no NATS, no clock, no Kubernetes; the
// collector in operator/controller (usage_collector.h) sends the requests
// and exports what the ledger says.
//
// Where the figures come from (nats-server's monitor and events; formats
// checked against Debian's 2.9.10 and 2.15 in usage_nats_test):
//  - CONNZ with `auth` (every server answers $SYS.REQ.SERVER.PING.CONNZ,
//    further pages from $SYS.REQ.SERVER.<id>.CONNZ): each open connection's
//    account, authorized user, subscriptions and counters. In one shared
//    account (isolation: Permissions) the user says which installation a
//    connection is; with an account per installation (Accounts) the account.
//    Counters there reset when a connection reconnects.
//  - $SYS.ACCOUNT.<account>.DISCONNECT: a closed connection's final
//    counters and why it closed (a slow consumer). Debian's 2.9 sends none
//    for its global account ($G; 2.15 does), so a connection that is gone
//    from CONNZ without an event is folded in at its last sampled counters.
//  - $SYS.REQ.ACCOUNT.PING.STATZ (Accounts): each account's counters on
//    each server, kept across reconnects (reset when that server restarts);
//    2.10+ also says which part crossed routes (checked against 2.15 in
//    three routed servers in usage_operator_mode_nats_test).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "switchboard/api/usage.h"
#include "switchboard/common/status.h"
#include "switchboard/natsauth/nkey.h"
#include "switchboard/operator_logic/env.h"
#include "switchboard/operator_logic/limits.h"
#include "switchboard/operator_logic/render.h"

namespace switchboard::operator_logic {

struct Directory;  // callout.h

// How often the collector asks every NatsServer. The one number: the
// collector, its docs and the alerts' `for:` durations follow it.
inline constexpr std::chrono::seconds kUsageInterval{30};
// A PubSubBackend's status.connections is written at most this often.
inline constexpr std::chrono::seconds kConnectionsStatusInterval{60};
// Connections per CONNZ page (nats-server's own default is 1024): the
// collector's pages and the authorizer's sweep's.
inline constexpr int kConnzPageSize = 1024;

// IncludeFile mode: the Secret (owned by the NatsServer, in its
// namespace) with the password of the system user the render adds
// (api::kCalloutSystemUsername in account api::kCalloutSystemAccount, as
// AuthCallout's static config has them): api::UsageSystemSecretName,
// "<server>-switchboard-system", keys "password" (the collector's) and
// "bcrypt" (the file's).
using api::UsageSystemSecretName;
inline constexpr std::string_view kUsageSystemPasswordKey = "password";
inline constexpr std::string_view kUsageSystemBcryptKey = "bcrypt";

// spec.usage.systemUser of a NatsServer (default false): api::UsageSystemUser.
bool UsageSystemUserOf(const nlohmann::json& server);

// The include file with the system account: api::kCalloutSystemAccount
// with its one user api::kCalloutSystemUsername (`bcrypt`, the only form
// the password takes in the file) declared as the server's
// system_account, as AuthCallout's static config has them, closing the
// file (inside its `accounts` block with Accounts isolation, a block of
// its own otherwise). `rendered` is RenderNatsConfig's output for
// `isolation`; its text and hash are updated. Render with max_bytes
// lowered by SystemUserBytes so the file stays under the ceiling.
// kInvalidArgument for a hash that is not bcrypt (never echoed) or a text
// that does not end as a rendered file does.
Status AddSystemUser(RenderedConfig& rendered, Isolation isolation, std::string_view bcrypt);
// How many bytes AddSystemUser adds (at most).
size_t SystemUserBytes(std::string_view bcrypt);

// The system Secret's data to keep or write: the stored password and
// bcrypt when both are there and well-formed, else a new generated
// password (GeneratePassword) and its hash. `changed` when it differs from
// `stored`.
struct UsageSystemPlan {
  SecretData data;
  std::string bcrypt;
  bool changed = false;
};
Result<UsageSystemPlan> PlanUsageSystemSecret(const std::optional<SecretData>& stored);

// A reply to a $SYS.REQ request, read: kInvalidArgument ("<what> reply is
// not a JSON object") when it is not one, kUnavailable ("<what> refused by
// the server: <its description>") when the server answered with an error.
Result<nlohmann::json> ParseSysReply(std::string_view body, std::string_view what);

inline constexpr std::string_view kPingConnzSubject = "$SYS.REQ.SERVER.PING.CONNZ";
inline constexpr std::string_view kPingAccountStatzSubject = "$SYS.REQ.ACCOUNT.PING.STATZ";
inline constexpr std::string_view kDisconnectEventsSubject = "$SYS.ACCOUNT.*.DISCONNECT";

// {"auth":true,"offset":N,"limit":N} and "acc" when `account` is not
// empty (one account's connections; empty lists every account's, which
// only the system account may ask).
std::string UsageConnzRequest(std::string_view account, int64_t offset, int limit = kConnzPageSize);
// "$SYS.REQ.SERVER.<id>.CONNZ": the next pages of one server.
std::string ServerConnzSubject(std::string_view server_id);
// {"accounts":[]}: every account with a connection on the server.
std::string AccountStatzRequest();

// Messages and bytes, seen from the installation: `in` is what its clients
// published (the server received), `out` what they were delivered.
struct Traffic {
  int64_t msgs_in = 0, msgs_out = 0, bytes_in = 0, bytes_out = 0;
  Traffic& operator+=(const Traffic& o);
  bool operator==(const Traffic&) const = default;
};

struct SampledConnection {
  std::string server_id, server_name;
  uint64_t cid = 0;
  std::string account, user;  // user: CONNZ's authorized_user
  int64_t subscriptions = 0;
  Traffic traffic;
};
struct UsageConnzPage {
  std::string server_id, server_name;
  int64_t total = 0, offset = 0;
  std::vector<SampledConnection> connections;
};
// One server's CONNZ reply. kInvalidArgument when it is not one;
// kUnavailable with the server's error when it answered with one.
Result<UsageConnzPage> ParseUsageConnz(std::string_view body);
// The offsets still to ask of that server after `page` (empty when it was
// the last).
std::vector<int64_t> RemainingConnzOffsets(const UsageConnzPage& page, int limit = kConnzPageSize);

struct ClosedConnection {
  std::string server_id, server_name;
  uint64_t cid = 0;
  std::string account, user;
  Traffic traffic;  // final
  bool slow_consumer = false;
};
// A $SYS.ACCOUNT.<acc>.DISCONNECT event. Its `sent`/`received` are the
// client's (sent = what it published), the reverse of STATZ's.
Result<ClosedConnection> ParseDisconnectEvent(std::string_view body);

struct AccountStat {
  std::string server_id, server_name, account;
  int64_t connections = 0;
  Traffic traffic;  // since the server started
  int64_t slow_consumers = 0;
};
// One server's STATZ reply, one entry per account it reports. Traffic is
// the account's client connections' on that server: nats-server 2.10+
// counts what crossed routes, gateways and leaf nodes into the account's
// totals too and says how much; that part is left out, so a message is
// counted where it was published and where it was delivered, once each
// (2.9 says nothing of it: a cluster of 2.9 servers counts it again on
// each server it crossed).
Result<std::vector<AccountStat>> ParseAccountStatz(std::string_view body);

// Which installation a connection is. "<namespace>/<name>".
struct UsageDirectory {
  Isolation isolation = Isolation::kPermissions;
  // Permissions: every user name an installation's engines may connect
  // with (its current user and, during a rotation, the previous one). A
  // callout user's authorized_user is "<username>#<generation>"
  // (CalloutConnectionName), looked up by the part before '#'.
  std::map<std::string, std::string, std::less<>> by_user;
  // Accounts: the installation's account.
  std::map<std::string, std::string, std::less<>> by_account;
  // The limits NATS applies (InstallationLimitsOf), of installations that
  // have any.
  std::map<std::string, InstallationLimits, std::less<>> limits;
  // Every installation, with or without connections: one series set each.
  std::set<std::string, std::less<>> installations;
};
// The directory of an IncludeFile server: the installations its file
// renders (CollectInstallations), each user of each one, its account
// ("<namespace>/<name>", as the render names it) and its limits.
UsageDirectory UsageDirectoryOf(const RenderInput& rendered);
// Of an AuthCallout server (one shared account): the authorizer's
// directory, by user name.
UsageDirectory UsageDirectoryOf(const Directory& callout);

// The installations' derived account keys (InstallationAccountKey),
// remembered: a derivation generates a key pair, seconds of CPU at 10,000
// installations every round (BENCHMARKS.md), while what it derives from
// (the signing key, namespace/name) rarely changes. Memory is a cache: a
// new one derives again. Not thread-safe: one owner (the collector).
class InstallationAccountCache {
 public:
  // The public account key of installation ns/name under `signing`.
  Result<std::string> Of(const natsauth::KeyPair& signing, std::string_view ns,
                         std::string_view name);
  // Drops what was derived with a signing key not in `signing_keys`
  // (public keys), and under each kept key the installations a directory
  // build did not ask for since the last Retain.
  void Retain(const std::set<std::string, std::less<>>& signing_keys);
  size_t size() const;

 private:
  struct Entry {
    std::string account;
    bool asked = false;
  };
  // signing public key -> "<ns>/<name>" -> entry
  std::map<std::string, std::map<std::string, Entry, std::less<>>, std::less<>> by_signing_;
};

// Of an AuthCallout server in NATS operator mode (isolation: Accounts):
// each installation of the authorizer's directory by its account, the key
// derived from the installation signing key (InstallationAccountKey: the
// key the operator pushes the account under and the authorizer places the
// installation's users in), with `limits` ("<namespace>/<name>" ->
// EffectiveLimits; installations without any are left out of them).
// An error only when a key cannot be derived. With `cache`, keys derived
// before are taken from it.
Result<UsageDirectory> OperatorModeUsageDirectoryOf(
    const Directory& callout, const natsauth::KeyPair& installation_signing,
    const std::map<std::string, InstallationLimits, std::less<>>& limits,
    InstallationAccountCache* cache = nullptr);

// The installation `account`/`user` belongs to, or nullptr.
const std::string* InstallationOf(const UsageDirectory& directory, std::string_view account,
                                  std::string_view user);

struct ServerUsage {
  int64_t connections = 0;
  int64_t subscriptions = 0;
  int64_t max_subscriptions_per_connection = 0;
  Traffic traffic;             // totals: they never decrease, except where STATZ's do
  int64_t slow_consumers = 0;  // total
  bool operator==(const ServerUsage&) const = default;
};
// (installation, server name)
using UsageKey = std::pair<std::string, std::string>;

// What one collection round of one NatsServer brought.
struct UsageRound {
  std::vector<std::string> answered;     // server ids that answered every page
  std::vector<SampledConnection> live;   // every page of those servers
  std::vector<ClosedConnection> closed;  // events since the last round
  std::vector<AccountStat> stats;        // Accounts isolation
};

// The figures of one NatsServer, kept between rounds. Memory is a cache:
// a new ledger (a restart, a new leader) starts the totals again, which
// Prometheus takes as a counter reset.
class UsageLedger {
 public:
  // Folds one round in. A connection gone from a server that answered
  // counts at its final counters (its event's, else its last sample's); a
  // server that did not answer keeps its last figures. Installations no
  // longer in `directory` are dropped.
  void Round(const UsageDirectory& directory, const UsageRound& round);
  // Per (installation, server) that has ever had a connection; sorted.
  const std::map<UsageKey, ServerUsage>& usage() const { return usage_; }
  // An installation's connections on every server.
  int64_t Connections(std::string_view installation) const;

 private:
  struct Open {
    UsageKey key;
    Traffic traffic;  // last sampled
  };
  using ConnId = std::pair<std::string, uint64_t>;  // (server id, cid)
  std::map<ConnId, Open> open_;
  // Gone without an event in the last round: an event that comes later
  // adds only what the sample missed.
  std::map<ConnId, Open> folded_;
  std::map<UsageKey, Traffic> closed_traffic_;
  std::map<UsageKey, int64_t> closed_slow_;
  std::map<std::string, std::string> server_names_;  // id -> name
  std::map<UsageKey, ServerUsage> usage_;
};

// How much a Prometheus counter that last showed `last` must grow to show
// `now`: now - last, or all of `now` when it went down (the source reset).
int64_t CounterIncrement(int64_t last, int64_t now);

// Whether to write a PubSubBackend's status.connections now: only when it
// differs from what is stored, and at most once per
// kConnectionsStatusInterval (`last_write` nullopt: never written by this
// process).
bool ShouldWriteConnections(std::optional<int64_t> stored, int64_t now_count,
                            std::optional<std::chrono::steady_clock::time_point> last_write,
                            std::chrono::steady_clock::time_point now);

}  // namespace switchboard::operator_logic
