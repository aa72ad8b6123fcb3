// Auth callout mode (spec.provisioning.mode AuthCallout): the decisions the
// operator and the authorizer share, pure and table-tested.
//
// In this mode the NATS server config is static (RenderCalloutConfig) and
// every CONNECT of a user the config does not know goes to the authorizer on
// $SYS.REQ.USER.AUTH, which answers from cluster state alone:
// CollectDirectory (the same installations CollectInstallations renders into
// a file-mode server's include file) and DecideAuthorization. Every replica
// of the authorizer sees the same objects and so answers the same.
//
// The operator keeps the callout's keys in an owned Secret
// (<server>-auth-callout): the issuer account seed that signs the user JWTs
// and the passwords of the two users the static config declares
// (PlanCalloutKeys). The seed and the passwords are secrets: no function
// here puts them in a message.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/api/constants.h"
#include "switchboard/api/limits.h"
#include "switchboard/api/views.h"
#include "switchboard/common/status.h"
#include "switchboard/operator_logic/cluster_render.h"
#include "switchboard/operator_logic/credentials.h"
#include "switchboard/operator_logic/env.h"
#include "switchboard/operator_logic/installation_record.h"
#include "switchboard/operator_logic/rotation.h"
#include "switchboard/operator_logic/time_util.h"

namespace switchboard::operator_logic {

// authorization.timeout in the static config: how long the server waits for
// the authorizer's answer (NATS's default is 2 s).
inline constexpr int kCalloutTimeoutSeconds = 5;

// The callout Secret (<server>-auth-callout, owned by the NatsServer,
// managed-by label). Keys:
namespace callout_keys {
inline constexpr std::string_view kIssuerSeed = "issuer-seed";  // SA...: the secret
inline constexpr std::string_view kIssuer = "issuer";           // A...
inline constexpr std::string_view kAuthorizerPassword = "authorizer-password";
inline constexpr std::string_view kAuthorizerBcrypt = "authorizer-bcrypt";
inline constexpr std::string_view kSystemPassword = "system-password";
inline constexpr std::string_view kSystemBcrypt = "system-bcrypt";
// The CA bundle (PEM) of spec.tls.caSecretRef, copied here so that the
// authorizer, which reads only managed Secrets, verifies the servers with
// the CA the operator's probe uses. Absent when the server has no CA.
inline constexpr std::string_view kCa = "ca.crt";
}  // namespace callout_keys

struct CalloutKeys {
  std::string issuer_seed;  // secret
  std::string issuer;       // public account key
  Credentials authorizer;   // username api::kAuthorizerUsername
  Credentials system;       // username api::kCalloutSystemUsername
  // PEM CA bundle to verify the NATS servers with ("" when none). Public,
  // yet never put in a message either.
  std::string ca;
  bool operator==(const CalloutKeys&) const = default;
};

// Every key of the Secret; the user names are not stored (they are fixed);
// "ca.crt" only when there is a CA.
SecretData EncodeCalloutKeys(const CalloutKeys& keys);
// kInvalidArgument naming the key at fault (missing, not a seed or key of
// the account kind, the issuer not the seed's public key, a hash that is not
// bcrypt, a "ca.crt" that is not PEM certificates), never a value.
Result<CalloutKeys> DecodeCalloutKeys(const SecretData& data);

// "" when `pem` holds one or more PEM certificates (parsed with OpenSSL) and
// nothing else but whitespace between them; otherwise why not (never
// quoting the text).
std::string CheckCaBundle(std::string_view pem);

// What the callout Secret's CA should be, from spec.tls.caSecretRef (`ref`,
// nullopt: the server names no CA) and that Secret key's value as read
// (`found`, nullopt: the Secret or its key is missing). `ca` is the value to
// store ("" = none), or nullopt to keep what is stored while `problem` (the
// condition's message: names spec.tls.caSecretRef and the fix) is reported.
struct CalloutCaDecision {
  std::optional<std::string> ca;
  std::string problem;
};
CalloutCaDecision DecideCalloutCa(std::string_view server_ns,
                                  const std::optional<api::SecretKeyRef>& ref,
                                  const std::optional<std::string>& found);

struct CalloutKeysPlan {
  CalloutKeys keys;
  bool changed = false;  // write the Secret
  std::string note;      // what was generated, for an event; never a secret
};
// Keeps what is stored and valid; generates only what is missing. A new
// issuer only when there is none (auth_callout is not reloadable: a new
// issuer needs a restart of every NATS server). An issuer seed that is
// stored but unusable fails (kInvalidArgument) instead of being replaced;
// a password without its hash gets a hash, a hash without its password (or
// one that does not match) gets a new password. `ca` is what "ca.crt"
// becomes ("" removes it; nullopt keeps a stored one that still passes
// CheckCaBundle): the CA follows spec.tls.caSecretRef on every plan, so a
// rotated CA reaches the authorizer on the operator's next reconcile.
Result<CalloutKeysPlan> PlanCalloutKeys(const std::optional<SecretData>& stored,
                                        const CredentialDeps& deps = {},
                                        const std::optional<std::string>& ca = std::string());

// The static server config: the config Secret's file in AuthCallout mode
// (same Secret name and key as IncludeFile mode). Defines max_payload, the
// accounts SWITCHBOARD_AUTH (authorizer user), <account> (empty), SYS
// (system user), system_account, authorization { timeout, auth_callout {
// issuer, account: SWITCHBOARD_AUTH, auth_users: [switchboard-authorizer],
// allowed_accounts: [<account>] } }. Deterministic bytes; every value is
// quoted. Refuses (kInvalidArgument, naming the field) a server namespace
// or name that is not a Kubernetes name, max_payload outside
// [16 MiB, 64 MiB], an account api::CheckCalloutAccount refuses (outside
// [A-Za-z0-9_-]{1,64}, $G, SWITCHBOARD_AUTH, SYS),
// an issuer that is not an account public key and
// hashes that are not bcrypt (never echoed), a timeout outside 1..60.
struct CalloutConfigInput {
  std::string server_ns, server_name;
  int64_t max_payload = api::kEngineMaxPayload;
  std::string account = std::string(api::kDefaultCalloutAccount);
  std::string issuer, authorizer_bcrypt, system_bcrypt;
  int timeout_seconds = kCalloutTimeoutSeconds;
};
Result<std::string> RenderCalloutConfig(const CalloutConfigInput& input);

// Who may connect: the same installations CollectInstallations renders for
// a file-mode server (ONE selection function shared by both), with what the
// authorizer needs to check a password.
//
// A Directory holds no copy of what the installations' records hold: an
// entry keeps its installation's record alive and reads the name, prefix,
// user name and passwords from it (the record's decoded credential state),
// so the authorizer's directory of N installations costs a map node each.
struct AcceptedPassword {
  std::string_view password;  // plaintext (compared in constant time), or empty and
  std::string_view bcrypt;    // verified with BcryptVerify
  int generation = 0;         // the rotation count it belongs to
  std::optional<Time> until;  // refused from then on (a retiring password)
  bool operator==(const AcceptedPassword&) const = default;
};
// At most two: the current user's and, during a rotation that keeps the
// user name, the previous one's. Views into the entry's record: valid while
// the entry (or a copy of it) lives.
class AcceptedPasswords {
 public:
  const AcceptedPassword* begin() const { return items_.data(); }
  const AcceptedPassword* end() const { return items_.data() + size_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const AcceptedPassword& operator[](size_t i) const { return items_[i]; }
  void push_back(const AcceptedPassword& p) { items_[size_++] = p; }  // at most two

 private:
  std::array<AcceptedPassword, 2> items_{};
  size_t size_ = 0;
};
// One user name of an accepted installation: the current user's, or the
// previous user's while a rotation that changed the name is under way.
class DirectoryEntry {
 public:
  // `installation` has credentials; `username` is its current or previous
  // user name (else the entry accepts no password).
  DirectoryEntry(std::shared_ptr<const InstallationRecord> installation, std::string_view username);

  const std::string& ns() const { return installation_->ns; }
  const std::string& name() const { return installation_->name; }
  const std::string& subject_prefix() const { return installation_->subject_prefix; }
  std::string_view username() const { return username_; }
  // Current first: the user's password(s) in its credential state, a
  // retiring one with its `until`.
  AcceptedPasswords passwords() const;
  const InstallationRecord& installation() const { return *installation_; }

 private:
  std::shared_ptr<const InstallationRecord> installation_;
  std::string_view username_;  // into installation_->credentials
};
struct Directory {
  std::string server_ns, server_name, account;
  // Keyed by DirectoryEntry::username(), a view into the entry's record.
  std::map<std::string_view, DirectoryEntry, std::less<>> by_user;
  std::vector<std::string> skipped;  // "<ns>/<name>: why", never a secret
  // Adds `entry` under its user name; false (and nothing changes) when the
  // name is there already.
  bool Add(DirectoryEntry entry);
};
// kInvalidArgument when the server's own fields do not parse. An
// installation whose user name or prefix another, older one keeps
// (api/claims.h), or whose values the file render would refuse, is in
// `skipped` rather than in `by_user`.
// `records` as CollectInstallations takes them (the authorizer's cache);
// the entries share them.
Result<Directory> CollectDirectory(
    const nlohmann::json& server,
    const std::vector<std::shared_ptr<const InstallationRecord>>& records);
// The same from the objects (the records computed first, as
// CollectInstallations does).
Result<Directory> CollectDirectory(const nlohmann::json& server,
                                   const std::vector<const nlohmann::json*>& backends,
                                   const SecretLookup& secret);

enum class Denial { kNone, kUnknownUser, kWrongPassword, kPasswordRetired, kNoCredentials };
std::string_view DenialReason(Denial denial);  // "UnknownUser", ...: metric label
struct AuthorizationDecision {
  Denial denial = Denial::kNone;  // kNone: allowed
  std::string message;            // the response's error and the log line; never a password
  std::string ns, name, username, account;  // allowed only
  std::string connection_name;              // CalloutConnectionName(username, generation)
  std::vector<std::string> allow;           // pub and sub allow: SubjectAllowList(prefix)
};
// kNoCredentials: an empty user name or password. A password matches an
// entry's AcceptedPassword when it is its plaintext (SHA-256 digests
// compared with CRYPTO_memcmp, so neither content nor length leaks through
// timing) or, for one stored only as a hash, deps.verify(password, bcrypt).
// A match whose `until` is <= now is kPasswordRetired.
AuthorizationDecision DecideAuthorization(const Directory& directory, std::string_view user,
                                          std::string_view password, Time now,
                                          const CredentialDeps& deps = {});
// {api::AllowedSubject(prefix)}: the list the include file renders too.
std::vector<std::string> SubjectAllowList(std::string_view prefix);
// The user JWT's name: "<username>#<generation>". connz (auth: true)
// reports it as the connection's `authorized_user` (nats-server 2.15,
// checked in callout_nats_test), so a retired password's connections can
// be found; LiveConnection::name is that field.
std::string CalloutConnectionName(std::string_view username, int generation);

// Connections that must go: in the directory's account, and whose name is
// not a currently accepted (username, generation) at `now`. The account
// holds only users the authorizer let in, so a name not of
// CalloutConnectionName's form goes too. Sorted by (server_id, cid).
struct LiveConnection {
  std::string server_id;
  uint64_t cid = 0;
  std::string account, name;
  bool operator==(const LiveConnection&) const = default;
};
std::vector<LiveConnection> ConnectionsToClose(const Directory& directory,
                                               const std::vector<LiveConnection>& live, Time now);
// The same with an account per installation (AuthCallout with isolation:
// Accounts, NATS operator mode): `accounts` maps each installation's
// account key to its user name (the directory's by_user key). Connections
// that must go are in one of those accounts and not named as a currently
// accepted (username, generation) of that account's user; connections in
// any other account (the system and auth accounts, an account no longer
// desired, which its deletion closes) are left alone. Sorted by
// (server_id, cid).
std::vector<LiveConnection> ConnectionsToCloseByAccount(
    const Directory& directory, const std::map<std::string, std::string>& accounts,
    const std::vector<LiveConnection>& live, Time now);

}  // namespace switchboard::operator_logic
