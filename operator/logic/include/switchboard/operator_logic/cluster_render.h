// A NatsServer's include file as a pure function of cluster state: the
// NatsServer, the PubSubBackends bound to it and their credentials Secrets.
// Whichever replica renders, whenever after its caches synced, the same
// objects give the same RenderInput and so the same bytes: nothing comes
// from what one process remembers, so a restart, a leader failover or a
// slow API server cannot drop a user whose backend still exists.
//
// A backend contributes its users (RenderedUsers of its stored state) when
//   - spec.kind is nats and spec.nats.serverRef names this server,
//   - it is not being deleted (its finalizer waits for a render without it),
//   - the server's allowedNamespaces admit its namespace,
//   - its credentials Secret `<name>-nats-credentials` is owned by it
//     (managed-by label + ownerReference uid), decodes (DecodeState, old
//     layouts included), and does not carry kSecretConflictAnnotation (the
//     backend is in SecretConflict: its env Secret's name is taken).
// Everything else contributes nothing and is listed in `skipped`. The
// selection runs over InstallationRecords (installation_record.h); the same
// selection (src/selection.h) decides who the authorizer lets in for a
// server in AuthCallout mode (callout.h CollectDirectory).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/common/status.h"
#include "switchboard/operator_logic/installation_record.h"
#include "switchboard/operator_logic/render.h"

namespace switchboard::operator_logic {

// Set on a backend's credentials Secret while the backend is in
// SecretConflict; its value is the conflicting Secret's name.
inline constexpr std::string_view kSecretConflictAnnotation =
    "pubsub.switchboard.dev/secret-conflict";

// Looks a Secret up by namespace and name (null when absent): the
// operator's label-selected cache, or a map in tests. The Secret need only
// stay valid until the next call of the same lookup: every caller reads it
// at once (the operator builds each from a cached record and keeps one).
using SecretLookup =
    std::function<const nlohmann::json*(std::string_view ns, std::string_view name)>;

struct ClusterRenderInput {
  RenderInput input;
  std::vector<std::string> skipped;  // "<ns>/<name>: why"; never a secret
};

// kInvalidArgument when the server's own fields do not parse (maxPayload,
// isolation), naming the field. `records` may hold any installations (those
// of other servers are ignored; nulls skipped); `skipped` follows their
// order.
Result<ClusterRenderInput> CollectInstallations(
    const nlohmann::json& server, const std::vector<const InstallationRecord*>& records);
// The same from the objects: the records of the backends bound to
// `server` (RecordOf, with their credentials Secrets from `secret`), in the
// order of `backends`.
Result<ClusterRenderInput> CollectInstallations(const nlohmann::json& server,
                                                const std::vector<const nlohmann::json*>& backends,
                                                const SecretLookup& secret);

// The users a rendered file holds (name and bcrypt hash), in file order:
// how a finalizer and a probe tell whether a user is in the file.
std::vector<NatsUser> UsersInConfig(std::string_view text);

}  // namespace switchboard::operator_logic
