// Credentials of one NATS installation over time: first provisioning, and
// staged password rotation. A pure state machine (time and randomness are
// passed in), persisted in the operator-owned credentials Secret
// `<backend>-nats-credentials`.
//
// Why staged: NATS allows one password per user name, removing a connected
// user drops its connection, and after two auth failures a client stops
// reconnecting for good. So a rotation adds a *new user* `<username>-r<N>`
// beside the old one and only removes the old one once engines have moved:
//
//   phase     rendered users    env Secret gets   leaves the phase when
//   --------  ----------------  ----------------  ------------------------------
//   None      current           current           rotate token changes, external
//                                                 password changes, or
//                                                 spec username changes -> Staged
//   Staged    current+previous  previous (old!)   a probe with the new (current)
//                                                 credentials passes, i.e. the
//                                                 server has reloaded the config
//                                                 -> Retiring (ConfirmStaged)
//   Retiring  current+previous  current (new)     the env Secret is seen to hold
//                                                 the new user AND (now >=
//                                                 retiresAt OR the ack annotation
//                                                 equals the rotate token) -> None
//
// So the env Secret never names a user the server does not know yet, and
// the old user stays valid for rotationGracePeriod after engines could
// first see the new one. A new rotate token during a rotation is not lost:
// it starts the next rotation once this one is done.
//
// In both modes the stored user name counts as unchanged when it is the
// spec's name or its `-r<N>` of the stored count, so switching a server
// between IncludeFile and AuthCallout starts no rotation.
//
// The controller, per reconcile:
//   1. plan = PlanCredentials(stored, inputs)      (may generate + hash: one bcrypt)
//   2. if plan.state_changed: write credentials Secret = EncodeState(plan.state)
//   3. write env Secret from plan.env; render with plan.users
//   4. probe with plan.probe
//   5. if plan.state.phase == Staged and the probe passed:
//        plan = ConfirmStaged(plan, now); write credentials Secret, env Secret
//   6. requeue at plan.requeue_at, if any
// Writing the state (2) before the env Secret (3) matters: a generated
// password must be persisted before anything uses it. While Staged,
// plan.probe (new user) differs from plan.env (old user, what engines run
// with): a failing probe then only means the server has not reloaded the
// config yet (Secret volume sync + reloader lag), not an outage; requeue
// soon, and keep Ready about the env credentials.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/common/status.h"
#include "switchboard/operator_logic/credentials.h"
#include "switchboard/operator_logic/env.h"
#include "switchboard/operator_logic/render.h"
#include "switchboard/operator_logic/time_util.h"

namespace switchboard::operator_logic {

enum class RotationPhase { kNone, kStaged, kRetiring };
// "" (None), "Staged", "Retiring": status.rotation.phase.
std::string_view RotationPhaseName(RotationPhase phase);

// Keys of the credentials Secret. `password` is also written when the
// password comes from the user's own Secret (passwordSecretRef): the copy is
// how a change is detected cheaply, and how the previous password stays
// available for the env Secret while a rotation is Staged.
namespace state_keys {
inline constexpr std::string_view kUsername = "username";
inline constexpr std::string_view kPassword = "password";
inline constexpr std::string_view kBcrypt = "bcrypt";
inline constexpr std::string_view kRotationCount = "rotation-count";  // N, decimal
inline constexpr std::string_view kRotationToken = "rotation-token";  // last token acted on
inline constexpr std::string_view kRotationPhase = "rotation-phase";  // Staged|Retiring
inline constexpr std::string_view kPreviousUsername = "previous-username";
inline constexpr std::string_view kPreviousPassword = "previous-password";
inline constexpr std::string_view kPreviousBcrypt = "previous-bcrypt";
inline constexpr std::string_view kRetiresAt = "retires-at";  // RFC 3339, Retiring only
}  // namespace state_keys

// The annotations on the PubSubBackend that start and end a rotation are
// api::kRotatePasswordAnnotation and api::kRotationAcknowledgedAnnotation.

struct CredentialState {
  Credentials current;
  std::optional<Credentials> previous;  // set iff phase != kNone
  RotationPhase phase = RotationPhase::kNone;
  int rotation_count = 0;          // N of the newest `<username>-r<N>`
  std::string rotation_token;      // rotate annotation value last acted on
  std::optional<Time> retires_at;  // set iff phase == kRetiring
  bool operator==(const CredentialState&) const = default;
};

// State <-> credentials Secret data. DecodeState also reads the
// older layout without a rotation-phase key (while a previous
// user exists: Retiring, due now when retires-at is absent; the
// password-check key is ignored), so an upgrade changes no password.
// Decode fails with kInvalidArgument
// naming the missing/bad key and the fix (delete the Secret to regenerate).
// A state without `password` decodes (legacy/adopted external credentials)
// with an empty password; PlanCredentials then verifies the hash.
SecretData EncodeState(const CredentialState& state);
Result<CredentialState> DecodeState(const SecretData& data);

// `<base>` for N = 0, else `<base>-r<N>`.
std::string RotatedUsername(std::string_view base, int n);

struct CredentialInputs {
  std::string username;  // spec.nats.credentials.username, defaulted
  // Password read from spec.nats.credentials.passwordSecretRef; nullopt when
  // the operator generates the password.
  std::optional<std::string> external_password;
  std::string rotate_token;  // rotate annotation value, "" when absent
  std::string ack_token;     // ack annotation value, "" when absent
  std::chrono::milliseconds grace_period = std::chrono::minutes(10);
  Time now;
  // SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME as currently stored in the env
  // Secret ("" when absent): a rotation only retires once this is the new user.
  std::string env_username;
  // AuthCallout: a rotation keeps the user name and changes only the
  // password; the authorizer accepts the previous password (its
  // AcceptedPassword, generation rotation_count - 1) while Staged and until
  // retiresAt while Retiring. The phases are the same; the env Secret's
  // user name does not change, so "the env Secret holds the new user" holds
  // at once. A stored `<username>-r<N>` of an IncludeFile server is kept as
  // it is (engines reconnect with the credentials they have).
  bool keep_username = false;
};

// Seams with real defaults (CSPRNG, bcrypt at kBcryptCost). Tests pass fast,
// counting fakes.
struct CredentialDeps {
  std::function<Result<std::string>()> generate_password = GeneratePassword;
  // (password, cost): the cost comes from BcryptCostFor.
  std::function<Result<std::string>(std::string_view, int)> hash =
      [](std::string_view p, int cost) { return BcryptHash(p, cost); };
  std::function<Result<bool>(std::string_view, std::string_view)> verify = BcryptVerify;
};

struct CredentialPlan {
  CredentialState state;           // to persist
  bool state_changed = false;      // write the credentials Secret
  Credentials env;                 // username/password for the env Secret
  Credentials probe;               // what the live probe should authenticate with
  std::vector<NatsUser> users;     // Installation::users: current, then previous
  std::optional<Time> requeue_at;  // Retiring: when the old user may go
  // One line for an event/log when something happened ("rotation staged:
  // new user team-a-hatchet-r1"); names users, never passwords. Empty otherwise.
  std::string note;
};

// One step of the state machine (see the table above). `stored` is the
// decoded credentials Secret, nullopt when absent. Fails with the deps' error
// (CSPRNG, bcrypt) or kInvalidArgument for an unusable external password.
// Hashes only new passwords: at most one bcrypt per call, none in steady state.
Result<CredentialPlan> PlanCredentials(const std::optional<CredentialState>& stored,
                                       const CredentialInputs& inputs,
                                       const CredentialDeps& deps = {});

// Staged -> Retiring after a probe with plan.probe passed: env switches to
// the new credentials, retiresAt = now + grace_period. Returns `plan`
// unchanged unless it is Staged.
CredentialPlan ConfirmStaged(const CredentialPlan& plan, Time now,
                             std::chrono::milliseconds grace_period);

// The users to render for a stored state: current, then previous while a
// rotation is in progress. What a server render uses for the *other*
// backends bound to it (read their credentials Secrets, DecodeState, this),
// equal to CredentialPlan::users for the same state.
std::vector<NatsUser> RenderedUsers(const CredentialState& state);

// status.rotation as JSON ({phase, retiresAt}), or null when not rotating.
nlohmann::json RotationStatus(const CredentialState& state);

}  // namespace switchboard::operator_logic
