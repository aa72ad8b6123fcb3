// The pure "desired state" steps the reconcilers need, in the controller's
// terms: thin adapters over operator/logic (switchboard::operator_logic),
// which owns credentials, the render and the env contract.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "k8s_util.h"
#include "switchboard/common/status.h"
#include "switchboard/controller/registry.h"

namespace switchboard::controller {

// 32 bytes from the OS CSPRNG (OpenSSL RAND_bytes), base64url without
// padding: 43 characters, safe in env vars and NATS config strings.
Result<std::string> GeneratePassword();

// bcrypt ($2b$, cost 11) through libxcrypt. About 90 ms: call once per
// password and keep the hash.
Result<std::string> BcryptHash(const std::string& password);
// The same for a password the operator generated: a lower work factor,
// because 256 random bits need none (operator_logic::kGeneratedPasswordBcryptCost).
Result<std::string> BcryptHashGenerated(const std::string& password);

struct RenderInput {
  std::string server_key;  // "namespace/name" (for the header comment)
  std::string isolation;   // spec.isolation: "", Permissions or Accounts
  int64_t max_payload = 16L * 1024 * 1024;
  int64_t max_pending = 0;            // 0: not rendered (server default)
  std::vector<BackendEntry> entries;  // sorted by backend key
};

struct Rendered {
  std::string text;
  std::string hash;                   // "sha256:..."
  std::vector<std::string> rejected;  // "<ns>/<name>: <field>: <why>" left out of the file
};

// The include file (operator_logic::RenderNatsConfig). Deterministic: same
// input, same bytes. kInvalidArgument for a server-level problem (maxPayload).
Result<Rendered> RenderInclude(const RenderInput& in);

// Engine env (docs/api.md, "The env Secret").
SecretData NatsEnv(const std::string& url, const std::string& username, const std::string& password,
                   const std::string& prefix);
SecretData RabbitEnv(const std::string& url, int64_t max_pub, int64_t max_sub);
SecretData PostgresEnv(int64_t max_conns, int64_t min_conns);

// "sha256:..." over the sorted key=value lines: what status.envSecretHash shows.
std::string EnvHash(const SecretData& data);

// Parses maxPayload as the API allows it: an integer, or a quantity string
// ("16Mi", "64Mi", "16777216"). Returns -1 when it does not parse.
// (operator_logic::ParseByteQuantity.)
int64_t ParseQuantity(const json& value);

}  // namespace switchboard::controller
