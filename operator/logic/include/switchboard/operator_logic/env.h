// The engine's env Secret (spec.output.secretName): exactly the variables
// Hatchet's engine reads (DESIGN.md §2), per kind, and a hash of them for
// status.envSecretHash. Pure.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace switchboard::operator_logic {

// Secret data: key -> plaintext value (base64 happens in BuildSecret).
// std::map keeps keys sorted, which the hash relies on.
using SecretData = std::map<std::string, std::string>;

inline constexpr std::string_view kEnvKind = "SERVER_MSGQUEUE_PUBSUB_KIND";
inline constexpr std::string_view kEnvNatsUrl = "SERVER_MSGQUEUE_PUBSUB_NATS_URL";
inline constexpr std::string_view kEnvNatsUsername = "SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME";
inline constexpr std::string_view kEnvNatsPassword = "SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD";
inline constexpr std::string_view kEnvNatsSubjectPrefix =
    "SERVER_MSGQUEUE_PUBSUB_NATS_SUBJECT_PREFIX";
inline constexpr std::string_view kEnvRabbitMqUrl = "SERVER_MSGQUEUE_PUBSUB_RABBITMQ_URL";
inline constexpr std::string_view kEnvRabbitMqMaxPubChans =
    "SERVER_MSGQUEUE_PUBSUB_RABBITMQ_MAX_PUB_CHANS";
inline constexpr std::string_view kEnvRabbitMqMaxSubChans =
    "SERVER_MSGQUEUE_PUBSUB_RABBITMQ_MAX_SUB_CHANS";
inline constexpr std::string_view kEnvPostgresMaxConns =
    "SERVER_MSGQUEUE_PUBSUB_POSTGRES_MAX_CONNS";
inline constexpr std::string_view kEnvPostgresMinConns =
    "SERVER_MSGQUEUE_PUBSUB_POSTGRES_MIN_CONNS";

// kind=nats. `url` is the NatsServer's seed list as given (no credentials in
// it); username/password are CredentialPlan::env.
SecretData NatsEnv(std::string_view url, std::string_view username, std::string_view password,
                   std::string_view subject_prefix);

// kind=rabbitmq. `url` is read from spec.rabbitmq.urlSecretRef.
SecretData RabbitMqEnv(std::string_view url, int64_t max_pub_chans, int64_t max_sub_chans);

// kind=postgres.
SecretData PostgresEnv(int64_t max_conns, int64_t min_conns);

// "sha256:" + hex SHA-256 over the sorted pairs, each encoded as
// "<len(key)>:<key><len(value)>:<value>" (length-prefixed, so no two
// different maps hash the same input). Equal data gives an equal hash,
// whatever the insertion order. For status.envSecretHash: a pod annotation
// carrying it makes a Deployment roll out when the credentials change.
std::string EnvHash(const SecretData& data);

}  // namespace switchboard::operator_logic
