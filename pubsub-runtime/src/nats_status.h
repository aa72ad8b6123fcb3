// natsStatus -> Status, carrying nats.c's own error text.
#pragma once

#include <nats/nats.h>

#include <string_view>

#include "switchboard/common/status.h"

namespace switchboard::pubsub::internal {

// `what` says which call failed ("connect", "publish"). The text includes
// nats_GetLastError of this thread. Authorization failures map to
// Unauthenticated, permission violations to PermissionDenied, unreachable
// servers to Unavailable, a connection refused at a connection limit (the
// account's max_connections, or the server's) to ResourceExhausted with a
// message that names which.
Status FromNats(natsStatus s, std::string_view what);

}  // namespace switchboard::pubsub::internal
