// Status conditions (metav1.Condition) and the PubSubBackend status computed
// from the results of one reconcile's steps. Pure: the time is passed in.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/common/status.h"

namespace switchboard::operator_logic {

namespace condition_types {
inline constexpr std::string_view kReady = "Ready";
inline constexpr std::string_view kCredentialsReady = "CredentialsReady";
inline constexpr std::string_view kConfigRendered = "ConfigRendered";
inline constexpr std::string_view kEnvSecretReady = "EnvSecretReady";
inline constexpr std::string_view kProbed = "Probed";
// NatsServer: whether every installation fits into the config Secret.
inline constexpr std::string_view kConfigFits = "ConfigFits";
// NatsServer in AuthCallout mode: whether every server that answered the
// system account's ping has an authorizer subscribed.
inline constexpr std::string_view kAuthorizerAvailable = "AuthorizerAvailable";
}  // namespace condition_types

// Reasons (docs/api.md). Ready=False uses the failing step's reason.
namespace reasons {
inline constexpr std::string_view kInvalidSpec = "InvalidSpec";
inline constexpr std::string_view kServerNotFound = "ServerNotFound";
inline constexpr std::string_view kNamespaceNotAllowed = "NamespaceNotAllowed";
inline constexpr std::string_view kSecretConflict = "SecretConflict";
inline constexpr std::string_view kCredentialsNotFound = "CredentialsNotFound";
inline constexpr std::string_view kServerUnreachable = "ServerUnreachable";
// The CA bundle of the NatsServer's spec.tls.caSecretRef is missing or is
// not PEM certificates: nothing is dialled until it is fixed.
inline constexpr std::string_view kCaSecretUnusable = "CaSecretUnusable";
inline constexpr std::string_view kAuthFailed = "AuthFailed";
inline constexpr std::string_view kMaxPayloadTooSmall = "MaxPayloadTooSmall";
inline constexpr std::string_view kPermissionDenied = "PermissionDenied";
inline constexpr std::string_view kConfigNotReloaded = "ConfigNotReloaded";
inline constexpr std::string_view kConfigTargetMissing = "ConfigTargetMissing";
// Finalizer events (Warning): cleanup skipped or bounded.
inline constexpr std::string_view kServerGone = "ServerGone";
inline constexpr std::string_view kCleanupTimedOut = "CleanupTimedOut";
// Finalizer event (Normal): the user left the rendered file.
inline constexpr std::string_view kUserRemoved = "UserRemoved";
// Events of the credential state machine (Normal).
inline constexpr std::string_view kCredentialsCreated = "CredentialsCreated";
inline constexpr std::string_view kRotationSwitched = "RotationSwitched";
inline constexpr std::string_view kRotationCompleted = "RotationCompleted";
// Ready=True.
// nats, while a rotation waits for the server's reload: the env Secret's
// (previous) credentials passed the probe.
inline constexpr std::string_view kRotationStaged = "RotationStaged";
inline constexpr std::string_view kProbed = "Probed";                      // nats
inline constexpr std::string_view kEnvSecretWritten = "EnvSecretWritten";  // rabbitmq, postgres
// Sub-conditions.
inline constexpr std::string_view kSucceeded = "Succeeded";  // step ran and passed
inline constexpr std::string_view kPending = "Pending";      // Unknown: an earlier step failed
inline constexpr std::string_view kNotApplicable = "NotApplicable";  // e.g. Probed for postgres
// Left out of its server's file (render.h Rejected): a value the file
// cannot carry (kRenderRejected), or the file is full (kConfigFull; also
// the NatsServer's ConfigFits=False).
inline constexpr std::string_view kRenderRejected = "RenderRejected";
inline constexpr std::string_view kConfigFull = "ConfigFull";
// NatsServer Ready=True.
inline constexpr std::string_view kConfigRendered = "ConfigRendered";
// NatsServer ConfigFits=True.
inline constexpr std::string_view kFits = "Fits";
// NatsServer Ready=True in AuthCallout mode: the static config and the
// callout Secret's keys are written.
inline constexpr std::string_view kCalloutConfigured = "CalloutConfigured";
// NatsServer AuthorizerAvailable: True, every answering server has an
// authorizer subscribed; False, at least one has none (reason
// kNoAuthorizer); Unknown, no server answered (kServerUnreachable).
inline constexpr std::string_view kAuthorizersSubscribed = "AuthorizersSubscribed";
inline constexpr std::string_view kNoAuthorizer = "NoAuthorizer";
// PubSubBackend in AuthCallout mode, Ready=False: the probe was refused
// within the authorizer's sync window after the credentials Secret was
// written (its caches may not have seen the Secret yet).
inline constexpr std::string_view kAuthorizerPending = "AuthorizerPending";
// PubSubBackend Ready=False: the server refused the probe's connection at a
// connection limit, the installation's account's (maxConnections: the
// credentials were accepted) or the server's own max_connections. Engines
// already connected keep working; no new one can connect. A fault, not a
// waiting state (a Warning event); retried after the failure retry.
inline constexpr std::string_view kConnectionLimitReached = "ConnectionLimitReached";
// NatsServer Ready=False, AuthCallout with isolation: Accounts: the account
// resolvers could not be brought in line with the installations (no server
// reachable, the system user refused, a push refused); retried.
inline constexpr std::string_view kAccountSyncFailed = "AccountSyncFailed";
// PubSubBackend Ready=False, AuthCallout with isolation: Accounts: its
// server's reconcile could not make its account (InstallationAccountClaims
// refused the installation's limits; the message names the field and the
// fix). The server's next reconcile that changes this wakes it.
inline constexpr std::string_view kAccountRejected = "AccountRejected";
}  // namespace reasons

struct Condition {
  std::string type;
  std::string status;  // "True" | "False" | "Unknown"
  std::string reason;
  std::string message;  // must never contain a secret
  int64_t observed_generation = 0;
  std::string last_transition_time;  // RFC 3339
};

nlohmann::json ToJson(const Condition& c);
// kInvalidArgument when `type` or `status` is missing.
Result<Condition> ConditionFromJson(const nlohmann::json& j);
// Lenient: entries that are not conditions are dropped (a status written by
// someone else must not wedge the reconciler).
std::vector<Condition> ConditionsFromJson(const nlohmann::json& array);
nlohmann::json ToJson(const std::vector<Condition>& conditions);

// Sets `c` in `conditions` (replacing the one of the same type, else
// appending). lastTransitionTime is kept from the old condition when the
// status did not change, else set to `now_rfc3339`. Returns true when
// anything (status, reason, message, observedGeneration) changed.
bool SetCondition(std::vector<Condition>& conditions, Condition c, std::string_view now_rfc3339);
const Condition* FindCondition(const std::vector<Condition>& conditions, std::string_view type);
// The condition of `type` in a stored status (`.status` of an object, any
// shape), read as ConditionsFromJson reads it; nullopt when there is none.
// The one way the operator reads a condition someone stored.
std::optional<Condition> ConditionOf(const nlohmann::json& status, std::string_view type);

// The steps of a PubSubBackend reconcile, in order.
enum class Step { kValidate, kResolveServer, kCredentials, kRenderConfig, kEnvSecret, kProbe };

struct StepResult {
  Step step;
  bool ok = true;
  std::string reason;   // a reasons:: constant when !ok
  std::string message;  // human text; never a secret
};

enum class BackendKind { kNats, kRabbitMq, kPostgres };
Result<BackendKind> ParseBackendKind(std::string_view text);  // "nats" | "rabbitmq" | "postgres"

// Everything the status of one PubSubBackend is computed from.
struct BackendStatusInput {
  BackendKind kind = BackendKind::kNats;
  int64_t generation = 0;
  // Results of the steps that ran, in order; the reconcile stops at the
  // first failure, so at most the last one is !ok. Steps that do not apply to
  // the kind (render, probe for rabbitmq/postgres) are simply absent.
  std::vector<StepResult> steps;
  std::string env_secret_name;                // "" when not written yet
  std::string env_secret_hash;                // EnvHash
  std::string subject;                        // "<prefix>.*" (nats)
  std::string server;                         // "<ns>/<name>" of the NatsServer (nats)
  std::string username;                       // current user (nats)
  std::optional<int64_t> server_max_payload;  // as the probe saw it
  std::string last_probe_time;                // RFC 3339, "" if never
  nlohmann::json rotation;                    // RotationStatus(), null when none
  nlohmann::json limits;                      // LimitsStatus() (limits.h), null when none apply
  // The installation's account public key (A...) in AuthCallout with
  // isolation: Accounts (InstallationAccountOf); "" elsewhere, or while
  // the server has not written its keys.
  std::string account;
  // Ready=True reason/message when every step passed; empty: Probed (nats)
  // or EnvSecretWritten. E.g. kRotationStaged.
  std::string ready_reason;
  std::string ready_message;
};

// The new .status for a PubSubBackend, from its previous status (null or
// object; conditions' lastTransitionTime is kept where the status did not
// change) and this reconcile's results. Ready: False with the first failing
// step's reason and message; else True with reason Probed (nats) or
// EnvSecretWritten (others). Sub-conditions: True/Succeeded for steps that
// passed, False for the failing one, Unknown/Pending for later ones.
// Fields that are empty in `input` are omitted, except that a failed
// reconcile keeps envSecretName/envSecretHash/username/serverMaxPayload from
// `previous` (they still describe what exists).
nlohmann::json ComputeBackendStatus(const nlohmann::json& previous, const BackendStatusInput& input,
                                    std::string_view now_rfc3339);

// The Ready reason of a failed probe (pubsub::Probe's status code):
// kUnavailable -> ServerUnreachable, kUnauthenticated -> AuthFailed,
// kFailedPrecondition -> MaxPayloadTooSmall, kPermissionDenied ->
// PermissionDenied, kResourceExhausted (refused at a connection limit) ->
// ConnectionLimitReached, kTimeout and anything else -> ServerUnreachable. When
// `reload_expected` (the user was added to the config recently, or a
// rotation is Staged), a refusal or a timeout means the server has not
// loaded the file yet: ConfigNotReloaded.
std::string_view ProbeFailureReason(StatusCode code, bool reload_expected);

// An event to record for a status change, or nothing. Only a change of the
// Ready condition's status or reason gives one (Warning when Ready is not
// True, except for the waiting states ConfigNotReloaded and
// AuthorizerPending: waiting for a server to load its file or for the
// authorizers to see new credentials is no fault, so Normal), so a restart
// that recomputes the same status, or
// a retry that fails the same way, is silent. `previous` is the stored
// status (null when none): a first status that is Ready=True gives a Normal
// event too.
struct StatusEvent {
  bool warning = false;
  std::string reason;
  std::string message;
};
std::optional<StatusEvent> ReadyTransitionEvent(const nlohmann::json& previous,
                                                const nlohmann::json& next);

// Everything the status of one NatsServer is computed from.
struct ServerStatusInput {
  int64_t generation = 0;
  int installations = 0;       // rendered
  std::string config_hash;     // "" keeps the previous one
  std::string failure_reason;  // "": Ready=True ConfigRendered
  std::string failure_message;
  // What the render left out (RenderedConfig); max_bytes 0 when it did not
  // run, which keeps the previous ConfigFits.
  int left_out = 0;             // installations, for any reason
  int left_out_full = 0;        // of those, for the size ceiling
  int users_left_out_full = 0;  // rotation users of rendered installations
  size_t config_bytes = 0;
  size_t max_bytes = 0;
  size_t reserve_bytes = 0;
};

// The new .status for a NatsServer: installations, configHash, Ready
// (True/ConfigRendered, saying how many installations were left out, or
// False with the failure), and ConfigFits (True/Fits with the file's size,
// or False/ConfigFull with how many fit and how many are left out).
nlohmann::json ComputeServerStatus(const nlohmann::json& previous, const ServerStatusInput& input,
                                   std::string_view now_rfc3339);

// The event for a NatsServer's ConfigFits change: Warning when it turns
// False, Normal when it turns True again; nothing for a first True.
std::optional<StatusEvent> ConfigFitsEvent(const nlohmann::json& previous,
                                           const nlohmann::json& next);

}  // namespace switchboard::operator_logic
