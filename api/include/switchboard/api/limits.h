// Every limit of the Switchboard API, once. The CRDs (crds/*.yaml) carry
// the same numbers as maxLength, minLength, minimum, maximum and in CEL
// rules (tests/rules/crd_limits_test.cc reads the YAML and compares); the
// rules (rules/) refuse what is past them and the operator's render
// (operator/logic) uses the same constants, so nothing the rules accept is
// refused later (tests/operator/logic/limits_boundary_test.cc walks each
// boundary through both).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace switchboard::api {

// ---- Kubernetes names (k8s.io/apimachinery validation) --------------------
inline constexpr size_t kMaxDnsSubdomainLength = 253;  // object and Secret names
inline constexpr size_t kMaxDnsLabelLength = 63;       // namespaces
inline constexpr size_t kMaxSecretKeyLength = 253;     // keys of a Secret's data

// Suffixes of the names Switchboard derives (api/names.h). The longest one
// a name carries sets how long the name itself may be.
inline constexpr std::string_view kEnvSecretSuffix = "-pubsub-env";
inline constexpr std::string_view kCredentialsSecretSuffix = "-nats-credentials";
inline constexpr std::string_view kConfigSecretSuffix = "-switchboard";
// AuthCallout: the operator-owned Secret with the issuer account seed and
// the authorizer's and system user's passwords.
inline constexpr std::string_view kCalloutSecretSuffix = "-auth-callout";
// PubSubBackend metadata.name: <name>-nats-credentials stays a Secret name.
inline constexpr size_t kMaxBackendNameLength =
    kMaxDnsSubdomainLength - kCredentialsSecretSuffix.size();  // 236
// NatsServer metadata.name: every Secret named after it (<name>-switchboard,
// <name>-auth-callout) stays a Secret name, whichever mode it runs in (a
// server may switch modes).
inline constexpr size_t kLongestServerSuffixLength = kConfigSecretSuffix.size() >
                                                             kCalloutSecretSuffix.size()
                                                         ? kConfigSecretSuffix.size()
                                                         : kCalloutSecretSuffix.size();
inline constexpr size_t kMaxServerNameLength =
    kMaxDnsSubdomainLength - kLongestServerSuffixLength;  // 240

// ---- NatsServer -------------------------------------------------------------
inline constexpr size_t kMaxNatsUrlLength = 1024;     // spec.url, all seeds together
inline constexpr size_t kMaxAllowedNamespaces = 256;  // spec.allowedNamespaces.names
// spec.provisioning.authCallout.account: a NATS account name of
// [A-Za-z0-9_-] (the CRD's pattern ^[A-Za-z0-9_-]{1,64}$): nothing the
// server config's syntax would need quoted, and short enough to read in
// connz and logs.
inline constexpr size_t kMaxCalloutAccountLength = 64;

// Message-size contract: Hatchet's engine refuses a server whose
// max_payload is below 16 MiB; NATS refuses anything above 64 MiB and its
// default max_pending is 64 MiB.
inline constexpr int64_t kMiB = 1024 * 1024;
inline constexpr int64_t kEngineMaxPayload = 16 * kMiB;     // spec.maxPayload minimum
inline constexpr int64_t kNatsMaxPayloadLimit = 64 * kMiB;  // spec.maxPayload/maxPending maximum
inline constexpr int64_t kNatsDefaultMaxPending = 64 * kMiB;
inline constexpr int kMaxPort = 65535;

// ---- PubSubBackend ------------------------------------------------------------
// Subject prefix bound. NATS has no hard subject limit, but its docs advise
// subjects under 256 characters and at most 16 tokens. A subject is
// prefix + "." + topic, and the longest topic Hatchet uses is a scheduler
// partition `<uuid>_scheduler_v1` (36 + 13 = 49 characters); 64 characters
// are reserved for the topic, which leaves 256 - 1 - 64 = 191 for the prefix.
inline constexpr size_t kMaxSubjectLength = 256;
inline constexpr size_t kTopicReserve = 64;
inline constexpr size_t kMaxSubjectPrefixLength = kMaxSubjectLength - 1 - kTopicReserve;  // 191
inline constexpr size_t kMaxSubjectPrefixTokens = 15;  // + 1 topic token = 16

// spec.nats.credentials.username. A rotation renders `<username>-r<N>`
// beside it, N a rotation count that fits an int32: the render accepts the
// longest such name.
inline constexpr size_t kMaxUsernameLength = 200;
inline constexpr size_t kMaxRotationSuffixLength = 12;  // "-r2147483647"
inline constexpr size_t kMaxRenderedUsernameLength = kMaxUsernameLength + kMaxRotationSuffixLength;

// spec.rabbitmq.maxPubChans / maxSubChans and spec.postgres.maxConns /
// minConns (the CRD's int32 fields).
inline constexpr int64_t kMinRabbitmqChans = 1;
inline constexpr int64_t kMaxRabbitmqChans = 65535;
inline constexpr int64_t kMinPostgresMaxConns = 1;
inline constexpr int64_t kMinPostgresMinConns = 0;
inline constexpr int64_t kMaxPostgresConns = 10000;

// ---- Installation limits ------------------------------------------------------
// PubSubBackend spec.nats.limits and NatsServer spec.installationLimits
// (both int32 in the CRDs). NATS enforces them per account: maxConnections
// counts an installation's connections across the cluster,
// maxSubscriptions is per connection. maxPayload is bounded like the
// server's spec.maxPayload (kEngineMaxPayload to kNatsMaxPayloadLimit):
// the engine reads the account-limited max_payload after connecting.
inline constexpr int64_t kMinInstallationConnections = 1;
inline constexpr int64_t kMaxInstallationConnections = 1000000;
inline constexpr int64_t kMinInstallationSubscriptions = 1;
inline constexpr int64_t kMaxInstallationSubscriptions = 1000000;

// ---- status.conditions (both CRDs; metav1.Condition's bounds) --------------------
inline constexpr size_t kMaxConditionTypeLength = 316;
inline constexpr size_t kMaxConditionReasonLength = 1024;
inline constexpr size_t kMaxConditionMessageLength = 32768;

}  // namespace switchboard::api
