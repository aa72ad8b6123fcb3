// The static config of AuthCallout mode for tests that start a
// nats-server-callout: the bytes the operator ships
// (operator_logic::RenderCalloutConfig), never a copy written by hand, so a
// change to the render reaches every test of the callout. A test of the
// renderer itself checks it against the server instead of using this.
#pragma once

#include <cstdint>
#include <string>

#include "switchboard/common/status.h"
#include "switchboard/operator_logic/operator_mode_keys.h"

namespace switchboard::testing {

struct CalloutConfigParams {
  std::string issuer;  // the account public key the server trusts for callout answers
  std::string authorizer_password, system_password;  // plaintext; hashed here
  std::string server_ns = "nats", server_name = "main";
};

// The render, passwords hashed at bcrypt's lowest cost (tests only);
// kInvalidArgument as the render refuses its input.
Result<std::string> CalloutConfig(const CalloutConfigParams& params);

// The static config of NATS operator mode (AuthCallout with isolation:
// Accounts) for NatsServer nats/main: the render
// (operator_logic::RenderOperatorModeConfig) of these keys' JWTs, with the
// full resolver's store in `resolver_dir`, valid at `now` (Unix seconds).
Result<std::string> OperatorModeConfig(const operator_logic::OperatorModeKeyPairs& keys,
                                       std::string resolver_dir, int64_t now);

}  // namespace switchboard::testing
