// NatsOptions -> natsOptions: seeds, credentials as connect options,
// reconnect forever with a zero reconnect buffer (fail fast), TLS.
#pragma once

#include <string>
#include <vector>

#include "nats_handles.h"
#include "switchboard/common/status.h"
#include "switchboard/pubsub/nats_pubsub.h"

namespace switchboard::pubsub::internal {

using pubsub::SplitUrls;

// Builds nats.c options (callbacks are installed separately). Errors name
// the field.
Result<NatsOptionsPtr> BuildNatsOptions(const NatsOptions& options);

}  // namespace switchboard::pubsub::internal
