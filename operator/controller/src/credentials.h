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
//   previous-username / previous-bcrypt / retires-at
//                     the old user, still rendered until retires-at (RFC 3339)
//                     or an acknowledgement
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "backend_spec.h"
#include "switchboard/common/status.h"
#include "switchboard/controller/registry.h"
#include "switchboard/kube/client.h"

namespace switchboard::controller {

struct Credentials {
  std::string username;
  std::string password;
  std::vector<NatsUser> users;  // current first, then the retiring one
  bool rotating = false;
  std::string retires_at;  // RFC 3339, when rotating
  std::chrono::system_clock::time_point retires_at_time{};
  std::vector<std::pair<std::string, std::string>> events;  // (reason, message) to record
};

// Reads (or creates) the credentials and advances the rotation state
// machine. Errors: kNotFound (referenced Secret or key missing, message
// names it: CredentialsNotFound), kFailedPrecondition (our Secret's name is
// taken: SecretConflict), transient API errors.
Result<Credentials> EnsureCredentials(kube::Client* client, const json& backend,
                                      const BackendSpec& spec);

}  // namespace switchboard::controller
