// What a PubSubBackend reconcile does while its user is on its way into the
// server and once it is there: whether it is in the rendered file
// (DecideInFile), whether and when to probe and what the outcome means
// (DecideProbe, DecideProbeFailure), and when a deleted backend's finalizer
// may go (DecideFinalize). How a user reaches its server is a type, not a
// flag: through the rendered include file (ThroughFile, RemovalFromFile) or
// through the authorizers of a server in AuthCallout mode
// (ThroughAuthorizers, RemovalByAuthorizers), each with only the facts that
// apply to it; through the authorizers nothing waits for a render or a
// reload (DecideInFile does not apply). Pure: the controller gathers the
// facts (ConfigIndex, the render's verdicts, the stored status, the probe
// pool's outcome), calls these, and applies and reports the step they
// return.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "switchboard/common/status.h"
#include "switchboard/operator_logic/config_load.h"
#include "switchboard/operator_logic/retry_timing.h"
#include "switchboard/operator_logic/time_util.h"

namespace switchboard::operator_logic {

// ---- the user in the server's config Secret ----

// The last render's verdict on this backend's probe user (render.h
// Rejected for that user or for the whole installation).
struct LeftOut {
  std::string reason;   // reasons::kRenderRejected or reasons::kConfigFull
  std::string message;  // the render's, with its field
};

struct InFileFacts {
  std::string server;  // "<ns>/<name>" of the NatsServer
  std::string config_secret;
  bool probe_user_in = false;  // the config Secret holds the user to probe
  bool env_user_in = false;    // ... or the env Secret's user (a Staged rotation)
  std::string env_user;        // the env Secret's user
  // This process has rendered the server since it started: the verdict below
  // is known (after a restart nothing is, until the server's first render).
  bool server_rendered = false;
  std::optional<LeftOut> left_out;  // the probe user was left out of the last render
  bool has_status = false;          // the backend has conditions (not new)
};

enum class InFile {
  kProceed,  // the user is in the file: on to the probe
  kWait,     // not yet written: requeue soon and wake the server; no status
  kReport,   // a status (reason/message) and requeue soon: not written yet
  kLeftOut,  // a status (reason/message) and no retry: the render left it out
};

struct InFileStep {
  InFile step = InFile::kProceed;
  std::string reason;  // kReport, kLeftOut
  std::string message;
};

// Left out wins (a user still in the file from before is going; a Staged
// rotation whose new user is left out says that engines keep the old one);
// then in
// the file; then a new backend, or one whose server this process has not
// rendered yet, waits without a status (a restart flips nothing); others
// say ConfigNotReloaded while the write is pending.
InFileStep DecideInFile(const InFileFacts& facts);

// ---- how the probed user reaches its server ----

// Through the rendered include file (IncludeFile mode): the server knows a
// user once it has loaded a config that carries it (the kubelet syncs a
// changed Secret into the pod's volume within about a minute, then the
// reloader signals the server), so a refusal may mean "not loaded yet".
// `user_waiting` counts since this process first saw a config carrying the
// user.
struct ThroughFile {
  bool user_in_config = false;             // the config Secret holds the probed user
  ConfigLoad load = ConfigLoad::kUnknown;  // DecideConfigLoad on the reloader's report
  // How long a server may take to load a new user without telling.
  std::chrono::milliseconds load_window{0};
  // Before a probe: how long the reloader's verdict is still believed
  // (its patience - user_waiting).
  std::chrono::milliseconds load_patience_left{0};
};

// Through the authorizers of a server in AuthCallout mode, with either
// isolation (Permissions, or Accounts in NATS operator mode): no file and
// no reload; the authorizers serve the user from its credentials Secret.
// `user_waiting` counts from the write of the credentials Secret the
// probe's password comes from to the refusal. The authorizers' caches see
// that Secret within authorizer_sync normally; under load their watch can
// lag further, so a refusal is taken for an authorizer catching up until
// authorizer_patience, and retried every callout_retry at most meanwhile.
struct ThroughAuthorizers {
  std::chrono::milliseconds authorizer_sync = timing::kAuthorizerSync;
  std::chrono::milliseconds authorizer_patience = timing::kAuthorizerPatience;
  std::chrono::milliseconds callout_retry = timing::kCalloutRetryMax;
};

using UserPath = std::variant<ThroughFile, ThroughAuthorizers>;

// ---- a refused probe ----

struct ProbeFailureFacts {
  StatusCode code = StatusCode::kOk;  // pubsub::Probe's, never kOk here
  std::string probe_message;          // pubsub::Probe's message
  // A refusal at a connection limit (kResourceExhausted) at the NATS
  // server's own max_connections rather than the installation's account's
  // (pubsub::ConnectionLimitOf, which alone reads the server's texts).
  bool server_connection_limit = false;
  std::string user, server;  // the probed user; "<ns>/<name>" of the NatsServer
  UserPath path;             // how the user reaches the server
  // Since the user could first be served, as `path` counts it.
  std::chrono::milliseconds user_waiting{0};
  bool has_status = false;  // the backend has conditions (not new)
  // The installation's effective maxConnections (EffectiveLimits, what its
  // account carries); nullopt when no limit applies or it is not known.
  std::optional<int64_t> max_connections;
  // The first retry while not loaded yet (or not seen by the authorizers
  // yet), and the retry of a real failure.
  std::chrono::milliseconds reload_retry = timing::kReloadRetry;
  std::chrono::milliseconds failure_retry = timing::kFailureRetryMax;
};

struct ProbeFailureStep {
  std::string_view reason;  // reasons::
  std::string message;      // never a secret; stable across retries
  bool report = true;       // false: a new backend waits quietly (no status yet)
  std::chrono::milliseconds retry{0};
};

// What a refused probe means, by the way the user reaches the server.
// Through the file: a refusal (auth, permission) or a timeout while the
// user may not be loaded yet (not in the file; the report says an earlier
// config; or no report says it is loaded and the user is younger than
// load_window) is ConfigNotReloaded, retried with a growing interval
// (waiting / 8, from reload_retry up to 5 s), with a message that says so
// and how long it can take, and no word about credentials. Once a report
// says the server loaded it, or load_window has passed, it is what the
// code says (ProbeFailureReason): AuthFailed, PermissionDenied,
// ServerUnreachable.
// Through the authorizers: a refusal of credentials younger than
// authorizer_patience is AuthorizerPending, retried soon (waiting / 8,
// from reload_retry up to callout_retry): quietly for a new backend within
// authorizer_sync, reported after it with a message that says the
// authorizer may still be catching up and when the refusal will count.
// Once the credentials are older, what the code says, with a hint at the
// authorizer, retried after failure_retry.
// Either way: a connection refused at a connection limit
// (kResourceExhausted) is no refusal of the user and nothing to wait for:
// ConnectionLimitReached at once (reported for a new backend too),
// retried after failure_retry, with a message that says the engines
// already connected keep working, no new replica can connect, and which
// limit to raise (the account's maxConnections, with max_connections when
// known; or the server's own max_connections when the server's text says
// so).
ProbeFailureStep DecideProbeFailure(const ProbeFailureFacts& facts);

// Whether the probe pool takes a refused probe again itself, and when:
// only through the authorizers, while DecideProbeFailure calls it
// AuthorizerPending and the credentials are younger than authorizer_sync
// (the authorizers' usual sync time), after that step's retry. Those
// retries stay inside the pool, so a reconcile reads one outcome (a pass, a
// refusal past the window, another error) instead of going back through
// the work queue for each one; past the window the reconcile reports
// AuthorizerPending and retries as DecideProbeFailure says. nullopt: the
// reconcile takes it (always through the file, where a refusal may wait
// for a reload). `facts` as DecideProbeFailure's, with user_waiting the
// credentials' age at the refusal.
std::optional<std::chrono::milliseconds> DecideProbeRetry(const ProbeFailureFacts& facts);

// ---- the probe ----

struct ProbeFacts {
  bool staged = false;    // a Staged rotation: the probe user is the new one
  bool fallback = false;  // Staged, and the env Secret still holds another user
  // What the probe would be taken for now (a stored Ready is trusted only
  // for the very same), and the stored status.
  int64_t generation = 0;
  std::string env_secret_hash;
  std::string username;          // the env Secret's user
  nlohmann::json stored_status;  // null or object
  Time now{};
  std::chrono::milliseconds interval{0};    // --probe-interval
  std::chrono::milliseconds next_probe{0};  // interval, or sooner (a rotation's deadline)
  // What a failed probe is judged on: the probed user, its server, how the
  // user reaches it (`failure.path`: through the file, the reloader's
  // verdict also holds a probe back), the retries (reload_retry also paces
  // a Staged rotation's fallback). The outcome gives code, probe_message,
  // server_connection_limit and user_waiting; has_status comes from
  // stored_status.
  ProbeFailureFacts failure;
  // The latest probe taken with this fingerprint; nullopt: none.
  struct Outcome {
    bool primary_ok = false;
    bool fallback_ok = false;
    std::chrono::milliseconds age{0};
    // When neither passed: the primary probe's code and message, and
    // `failure.user_waiting` for this refusal.
    StatusCode code = StatusCode::kOk;
    std::string message;
    bool server_connection_limit = false;  // as in ProbeFailureFacts
    std::chrono::milliseconds user_waiting{0};
  };
  std::optional<Outcome> outcome;
};

enum class ProbeAction {
  kTrustStored,     // Passed from the stored status (its lastProbeTime, serverMaxPayload)
  kWaitForLoad,     // the reloader says the server has not loaded the user: no probe yet
  kSubmit,          // probe now, with the fallback when `fallback`
  kPassed,          // Passed, with the outcome's time
  kConfirm,         // Staged and the new user passed: ConfirmStaged, write both Secrets, Passed
  kRotationStaged,  // Ready=True RotationStaged: the env Secret's user works, the new one not yet
  kFailed,          // Ready=False with `reason`
};

// After the step: requeue after `after`, probe again at once (the outcome
// is stale: forget it and enqueue), or wait for the pool's callback.
enum class ProbeThen { kRequeue, kProbeAgain, kAwait };

struct ProbeStep {
  ProbeAction action = ProbeAction::kSubmit;
  bool report = true;   // write the status (false: a new backend waits quietly)
  std::string reason;   // kWaitForLoad, kFailed, kRotationStaged (Ready's reason)
  std::string message;  // never a secret
  ProbeThen then = ProbeThen::kAwait;
  std::chrono::milliseconds after{0};
};

// The probe policy, in order:
//  - no outcome for this fingerprint: a stored Ready=True Probed is trusted
//    (not while Staged) when it was taken for the same generation, env hash
//    and user less than `interval` ago, until that interval is up (a
//    restart re-probes nothing); else, not Staged and through the file, a
//    report that the server has not loaded the user waits
//    (ConfigNotReloaded, quietly for a new backend) until the patience runs
//    out; else probe;
//  - the primary passed: Passed (kConfirm while Staged, then requeue at
//    next_probe; else probe again once next_probe has passed);
//  - Staged and only the fallback passed: RotationStaged, probed again every
//    reload_retry;
//  - neither: DecideProbeFailure, probed again after its retry (at most
//    next_probe).
// lastProbeTime moves only with a passing primary probe: a retry that
// fails the same way writes nothing.
ProbeStep DecideProbe(const ProbeFacts& facts);

// ---- the finalizer ----

// How a deleted backend's user leaves its server.
// Out of the rendered file: the render leaves a deleting backend out, and
// the finalizer waits (bounded) until the config Secret no longer holds its
// users.
struct RemovalFromFile {
  bool config_exists = false;   // the server's config Secret
  bool users_rendered = false;  // it still holds a user of the backend
  // Since metadata.deletionTimestamp; nullopt when it does not parse.
  std::optional<std::chrono::milliseconds> deleting_for;
  std::chrono::milliseconds cleanup_timeout{60000};
};
// By the authorizers (AuthCallout, either isolation): nothing to wait for;
// they refuse the user once its credentials Secret is gone and close its
// connections.
struct RemovalByAuthorizers {};

using UserRemoval = std::variant<RemovalFromFile, RemovalByAuthorizers>;

struct FinalizeFacts {
  bool has_finalizer = false;  // ours or the legacy one
  std::string server;          // "<ns>/<name>" for a bound nats backend; "" otherwise
  bool server_exists = false;
  UserRemoval removal;  // how the user leaves the server (when it exists)
};

enum class Finalize {
  kNothing,  // no finalizer of ours: nothing to do
  kWait,     // the file still holds its users: wake the server, look again soon
  kCleanUp,  // delete its Secrets, drop the finalizer, record the event
};

struct FinalizeStep {
  Finalize step = Finalize::kNothing;
  std::chrono::milliseconds recheck{0};  // kWait
  // kCleanUp: the event (Warning when cleanup was skipped or cut short).
  bool warning = false;
  std::string reason;  // "" when there is no event (not a bound nats backend)
  std::string message;
};

// The bounded finalizer. ServerGone (Warning) when the NatsServer is gone.
// Out of the file: wait (rechecking every 500 ms) until the server's file
// no longer holds the backend's users; skip the wait when its config Secret
// is gone (ConfigTargetMissing) or after cleanup_timeout (CleanupTimedOut;
// also when deletionTimestamp does not parse), each a Warning; UserRemoved
// (Normal) when the user left in time. By the authorizers: clean up at
// once, UserRemoved.
FinalizeStep DecideFinalize(const FinalizeFacts& facts);

}  // namespace switchboard::operator_logic
