// A NatsServer's spec.usage: the system user the operator's usage
// collector logs in as on an IncludeFile server, and the Secret the
// operator keeps its password in. The rules (a name that collides, a name
// too long for the Secret) and the operator read it from here.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "switchboard/api/limits.h"
#include "switchboard/api/views.h"

namespace switchboard::api {

// <name>-switchboard-system: owned by the NatsServer, in its namespace.
inline constexpr std::string_view kUsageSystemSecretSuffix = "-switchboard-system";
// metadata.name of a NatsServer with spec.usage.systemUser: the Secret
// named after it stays a Secret name. Only then: the other servers keep
// kMaxServerNameLength.
inline constexpr size_t kMaxUsageSystemServerNameLength =
    kMaxDnsSubdomainLength - kUsageSystemSecretSuffix.size();  // 234

std::string UsageSystemSecretName(std::string_view server_name);

// spec.usage.systemUser (default false; anything but true is false).
bool UsageSystemUser(const NatsServerView& server);
// Whether the operator writes the system Secret for `server`: systemUser
// on an IncludeFile server (an AuthCallout server's system user is in its
// callout Secret).
bool WritesUsageSystemSecret(const NatsServerView& server);

}  // namespace switchboard::api
