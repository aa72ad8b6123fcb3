// Names and defaults of the Switchboard API (docs/api.md); its limits are
// in limits.h. Every component takes them from here so a default is written
// down once.
#pragma once

#include <cstdint>
#include <string_view>

#include "switchboard/api/limits.h"

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
inline constexpr std::string_view kDefaultMaxPayload = "16Mi";
inline constexpr std::string_view kIsolationPermissions = "Permissions";  // spec.isolation
inline constexpr std::string_view kIsolationAccounts = "Accounts";
inline constexpr std::string_view kDefaultIsolation = kIsolationPermissions;
// NatsServer spec.installationLimits.overrides: whether a PubSubBackend's
// spec.nats.limits may only lower the server's defaults, or raise them too.
inline constexpr std::string_view kOverridesLowerOnly = "LowerOnly";
inline constexpr std::string_view kOverridesLowerOrRaise = "LowerOrRaise";
inline constexpr std::string_view kDefaultOverrides = kOverridesLowerOnly;
inline constexpr std::string_view kDefaultConfigKey = "switchboard.conf";
inline constexpr std::string_view kDefaultCaKey = "ca.crt";
inline constexpr std::string_view kDefaultPasswordKey = "password";  // passwordSecretRef.key
inline constexpr std::string_view kDefaultRabbitmqUrlKey = "url";    // urlSecretRef.key
inline constexpr std::string_view kDefaultAllowedFrom = "Same";
inline constexpr int kDefaultNatsPort = 4222;

// How users reach NATS (NatsServer spec.provisioning.mode, DESIGN.md §1b).
inline constexpr std::string_view kProvisioningIncludeFile = "IncludeFile";
inline constexpr std::string_view kProvisioningAuthCallout = "AuthCallout";
inline constexpr std::string_view kDefaultProvisioning = kProvisioningIncludeFile;
// AuthCallout: the NATS account every installation's user lands in (the
// user JWT's aud; spec.provisioning.authCallout.account).
inline constexpr std::string_view kDefaultCalloutAccount = "HATCHET";
// AuthCallout: the accounts and users of the static server config the
// operator renders. The authorizer's own user lives alone in
// kCalloutAuthAccount (the callout requests carry plaintext passwords);
// kCalloutSystemUsername, in the system account, finds and closes
// connections ($SYS.REQ.SERVER.PING.CONNZ, .KICK) and counts authorizers.
// Names an installation's account may not take.
inline constexpr std::string_view kCalloutAuthAccount = "SWITCHBOARD_AUTH";
inline constexpr std::string_view kCalloutSystemAccount = "SYS";
// nats-server's implicit global account: users outside every account land
// there, so an installation account of that name would mean no account.
inline constexpr std::string_view kNatsGlobalAccount = "$G";
inline constexpr std::string_view kAuthorizerUsername = "switchboard-authorizer";
inline constexpr std::string_view kCalloutSystemUsername = "switchboard-system";
// Where nats-server sends each CONNECT it does not know, and the queue
// group every authorizer replica joins (each request is answered once).
inline constexpr std::string_view kAuthCalloutSubject = "$SYS.REQ.USER.AUTH";
inline constexpr std::string_view kAuthorizerQueueGroup = "switchboard-authorizer";
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
