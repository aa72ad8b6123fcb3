// The static server config of AuthCallout with isolation: Accounts (NATS
// operator mode): written once, never reloaded. Installations' accounts are
// not in it: they are pushed to the full resolver ($SYS.REQ.CLAIMS.UPDATE)
// and shared by every server of the cluster.
//
// It holds no secret: operator mode needs no seed in the server config
// (the JWTs in it are signed public claims), and no user or password
// either (operators do not allow configured users).
#pragma once

#include <cstdint>
#include <string>

#include "switchboard/api/limits.h"
#include "switchboard/common/status.h"
#include "switchboard/operator_logic/callout.h"

namespace switchboard::operator_logic {

struct OperatorModeConfigInput {
  std::string server_ns, server_name;  // the NatsServer, for the header comment
  int64_t max_payload = api::kEngineMaxPayload;
  std::string operator_jwt;        // self-signed; its system_account is the system account
  std::string system_account_jwt;  // preloaded
  std::string auth_account_jwt;    // preloaded: the callout's account
  std::string sentinel_jwt;        // default_sentinel: a bearer user of the auth account
  // The full resolver's store: an absolute path on the server's volume
  // (an emptyDir loses it on restart; the operator pushes it again).
  std::string resolver_dir;
  int timeout_seconds = kCalloutTimeoutSeconds;  // authorization.timeout: the callout's patience
  int64_t now = 0;                               // the JWTs' exp and nbf are checked against it
};

// Deterministic bytes:
//
//   max_payload: <bytes>
//   operator: "<operator JWT>"
//   system_account: "<SYS key>"
//   resolver: {type: full, dir: "<dir>", allow_delete: true}
//   resolver_preload: {"<SYS key>": "<JWT>", "<AUTH key>": "<JWT>"}
//   default_sentinel: "<bearer JWT>"
//   authorization {timeout: <s>}
//
// Refuses (kInvalidArgument, naming the field and the fix): a server
// namespace/name or max_payload as RenderCalloutConfig does, a token that
// does not decode as its kind, an operator JWT without system_account,
// account JWTs not signed by that operator (or one of its signing keys), a
// system account JWT for another key than the operator's system_account, an
// auth account without external authorization (auth_users) or equal to
// the system account, a sentinel that is not a bearer token of the auth
// account, a resolver dir that is not an absolute path of [A-Za-z0-9._/-],
// and a timeout outside 1..60.
Result<std::string> RenderOperatorModeConfig(const OperatorModeConfigInput& input);

}  // namespace switchboard::operator_logic
