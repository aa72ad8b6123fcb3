// A nats PubSubBackend's credentials: the owned Secret
// `<name>-nats-credentials` is their single source of truth.
//
//   username          current NATS user name (<base>, or <base>-r<N> after N rotations)
//   password          generated password (absent when spec references a Secret)
//   bcrypt            bcrypt hash of the current password (computed once)
//   password-check    sha256(bcrypt + "\n" + password) for a referenced password:
//                     tells whether the referenced value changed without re-hashing
//   rotation-token    the last rotate-password annotation acted on
//   rotation-count    N
//   rotation-phase    Staged | Retiring, while a rotation is in progress
//   previous-username / previous-bcrypt
//                     the old user, still rendered while rotating
//   previous-password the old password, Staged only: the env Secret keeps it
//                     until the server has been seen to accept the new user
//   retires-at        Retiring only: when the old user goes (RFC 3339)
//
// Rotation is staged so that no engine is ever handed a user the server
// does not know yet (the config Secret write is coalesced and a NATS
// reloader sees a Secret volume change only after up to a minute; nats.c
// stops reconnecting after two auth failures):
//
//   phase     rendered users    env Secret        leaves the phase when
//   --------  ----------------  ----------------  ------------------------------
//   (none)    current           current           the rotate token changes -> Staged
//   Staged    current+previous  previous (old!)   a probe with the new credentials
//                                                 passes -> Retiring (ConfirmStaged),
//                                                 retires-at = now + grace
//   Retiring  current+previous  current (new)     the env Secret holds the new user
//                                                 AND (now >= retires-at OR the ack
//                                                 annotation equals the token) -> none
//
// A rotate token that changes during a rotation is not lost: it starts the
// next rotation once this one is done. A Secret written by an older operator
// (previous-username without rotation-phase, env already switched) reads as
// Retiring, so an upgrade changes no password.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "backend_spec.h"
#include "k8s_util.h"
#include "switchboard/common/status.h"
#include "switchboard/controller/registry.h"
#include "switchboard/kube/client.h"

namespace switchboard::controller {

inline constexpr const char* kPhaseStaged = "Staged";
inline constexpr const char* kPhaseRetiring = "Retiring";

struct Credentials {
  std::string username;  // current (newest) user: what the probe uses
  std::string password;
  std::string env_username;  // what the env Secret gets: the previous user while Staged
  std::string env_password;
  std::vector<NatsUser> users;  // current first, then the previous one while rotating
  std::string phase;            // "" | Staged | Retiring
  bool rotating = false;        // phase != ""
  std::string retires_at;       // RFC 3339, when Retiring
  std::chrono::system_clock::time_point retires_at_time{};
  std::vector<std::pair<std::string, std::string>> events;  // (reason, message), no secrets
  bool staged() const { return phase == kPhaseStaged; }
};

// Reads (or creates) the credentials and advances the rotation state
// machine. Errors: kNotFound (referenced Secret or key missing, message
// names it: CredentialsNotFound), kFailedPrecondition (our Secret's name is
// taken: SecretConflict), transient API errors.
Result<Credentials> EnsureCredentials(kube::Client* client, const json& backend,
                                      const BackendSpec& spec);

// Staged -> Retiring, after a probe with `creds.username/password` (the new
// user) passed: persists the phase and retires-at = now + grace, and returns
// credentials whose env_* are the new ones. `creds` unchanged when not Staged.
Result<Credentials> ConfirmStaged(kube::Client* client, const json& backend,
                                  const BackendSpec& spec, const Credentials& creds);

// ---- The pure steps (exposed for tests) ----

struct RotationInputs {
  std::string base_username;  // spec.nats.credentials.username, defaulted
  std::string subject;        // <prefix>.*
  bool external = false;      // the password comes from passwordSecretRef
  std::string rotate_token;   // rotate annotation, "" when absent
  std::string ack_token;      // ack annotation, "" when absent
  std::chrono::milliseconds grace{600000};
  std::chrono::system_clock::time_point now;
  std::string env_username;  // user name in the env Secret now ("" when absent)
};

// One step on the credentials Secret data (see the table above): generates
// and hashes a missing generated password (bcrypt once per password, cost 6),
// starts or retires a rotation. For external passwords the caller has set
// bcrypt/password-check and fills password/env_password afterwards.
Result<Credentials> StepCredentials(SecretData* data, const RotationInputs& in);

// Staged -> Retiring on `data`; returns the credentials it now describes.
Credentials ConfirmStagedData(SecretData* data, const std::string& base_username,
                              const std::string& subject, std::chrono::system_clock::time_point now,
                              std::chrono::milliseconds grace);

// The credentials `data` describes (no events, no external password).
Credentials DescribeCredentials(const SecretData& data, const std::string& base_username,
                                const std::string& subject);

}  // namespace switchboard::controller
