// Names, defaults and limits of the Switchboard API (docs/api.md). Every
// component takes them from here so a default is written down once.
#pragma once

#include <cstdint>
#include <string_view>

namespace switchboard::api {

inline constexpr std::string_view kGroup = "pubsub.switchboard.dev";
inline constexpr std::string_view kVersion = "v1alpha1";
inline constexpr std::string_view kApiVersion = "pubsub.switchboard.dev/v1alpha1";
inline constexpr std::string_view kKindBackend = "PubSubBackend";
inline constexpr std::string_view kKindServer = "NatsServer";

// PubSubBackend spec.kind values.
inline constexpr std::string_view kBackendNats = "nats";
inline constexpr std::string_view kBackendRabbitmq = "rabbitmq";
inline constexpr std::string_view kBackendPostgres = "postgres";

// Defaults (docs/api.md).
inline constexpr std::string_view kDefaultSubjectPrefix = "hatchet.pubsub";
inline constexpr std::string_view kDefaultRotationGracePeriod = "10m";
inline constexpr int64_t kDefaultMaxPubChans = 10;
inline constexpr int64_t kDefaultMaxSubChans = 20;
inline constexpr int64_t kDefaultMaxConns = 5;
inline constexpr int64_t kDefaultMinConns = 1;
// Upper bounds the CRD schema enforces (crds/pubsub.switchboard.dev_pubsubbackends.yaml);
// the rule set checks the same ones so `switchboard validate` agrees with the API server.
inline constexpr int64_t kMaxRabbitmqChans = 65535;
inline constexpr int64_t kMaxPostgresConns = 10000;
inline constexpr std::string_view kDefaultMaxPayload = "16Mi";
inline constexpr std::string_view kDefaultIsolation = "Permissions";
inline constexpr std::string_view kDefaultConfigKey = "switchboard.conf";
inline constexpr std::string_view kDefaultCaKey = "ca.crt";
inline constexpr std::string_view kDefaultPasswordKey = "password";  // passwordSecretRef.key
inline constexpr std::string_view kDefaultRabbitmqUrlKey = "url";    // urlSecretRef.key
inline constexpr std::string_view kDefaultAllowedFrom = "Same";

// Message-size contract: Hatchet's engine refuses a server whose max_payload
// is below 16 MiB; NATS refuses anything above 64 MiB and its default
// max_pending is 64 MiB.
inline constexpr int64_t kMiB = 1024 * 1024;
inline constexpr int64_t kEngineMaxPayload = 16 * kMiB;
inline constexpr int64_t kNatsMaxPayloadLimit = 64 * kMiB;
inline constexpr int64_t kNatsDefaultMaxPending = 64 * kMiB;
inline constexpr int kDefaultNatsPort = 4222;

// Subject prefix bound. NATS has no hard subject limit, but its docs advise
// subjects under 256 characters and at most 16 tokens. A subject is
// prefix + "." + topic, and the longest topic Hatchet uses is a scheduler
// partition `<uuid>_scheduler_v1` (36 + 13 = 49 characters); 64 characters
// are reserved for the topic, which leaves 256 - 1 - 64 = 191 for the prefix.
inline constexpr size_t kMaxSubjectLength = 256;
inline constexpr size_t kTopicReserve = 64;
inline constexpr size_t kMaxSubjectPrefixLength = kMaxSubjectLength - 1 - kTopicReserve;  // 191
inline constexpr size_t kMaxSubjectPrefixTokens = 15;  // + 1 topic token = 16

// Annotations (docs/api.md, password rotation).
inline constexpr std::string_view kRotatePasswordAnnotation =
    "pubsub.switchboard.dev/rotate-password";
inline constexpr std::string_view kRotationAcknowledgedAnnotation =
    "pubsub.switchboard.dev/rotation-acknowledged";
// Set on a NatsServer's config Secret by a reloader (switchboard-config-sync)
// once the server has loaded that content: its ConfigHash, "sha256:<hex>".
// Outside the operator's own prefix, whose stale keys its writes remove.
inline constexpr std::string_view kLoadedConfigHashAnnotation =
    "switchboard.dev/loaded-config-hash";

}  // namespace switchboard::api
