// A NatsServer in AuthCallout mode with isolation: Accounts (NATS operator
// mode): what its spec says beyond the other modes.
#pragma once

#include <string>
#include <string_view>

#include "switchboard/api/views.h"

namespace switchboard::api {

// The full account resolver's store on each NATS server, unless
// spec.provisioning.authCallout.resolverDir says otherwise. On an emptyDir
// it is lost with the pod; the operator pushes every account again.
inline constexpr std::string_view kDefaultResolverDir = "/data/resolver";

// AuthCallout with isolation: Accounts.
bool OperatorMode(const NatsServerView& server);
// spec.provisioning.authCallout.resolverDir, default kDefaultResolverDir.
std::string ResolverDirOf(const NatsServerView& server);

}  // namespace switchboard::api
