// The pure "desired state" steps the reconcilers need: credentials, the
// rendered NATS include file, the engine env. (operator/logic is the home of
// the richer versions of these; this is the controller's minimal set.)
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

struct RenderInput {
  std::string server_key;  // "namespace/name" (for the header comment)
  int64_t max_payload = 16L * 1024 * 1024;
  int64_t max_pending = 0;            // 0: not rendered (server default)
  std::vector<BackendEntry> entries;  // sorted by backend key
};

// The include file. Deterministic: same input, same bytes. Users appear in
// backend-key order, each backend's users in the order given.
std::string RenderInclude(const RenderInput& in);

// Engine env (docs/api.md, "The env Secret").
SecretData NatsEnv(const std::string& url, const std::string& username, const std::string& password,
                   const std::string& prefix);
SecretData RabbitEnv(const std::string& url, int64_t max_pub, int64_t max_sub);
SecretData PostgresEnv(int64_t max_conns, int64_t min_conns);

// "sha256:..." over the sorted key=value lines: what status.envSecretHash shows.
std::string EnvHash(const SecretData& data);

// Parses maxPayload as the API allows it: an integer, or a quantity string
// ("16Mi", "64Mi", "16777216"). Returns -1 when it does not parse.
int64_t ParseQuantity(const json& value);

}  // namespace switchboard::controller
