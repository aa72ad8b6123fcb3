// NatsOptions -> natsOptions: seeds, credentials as connect options,
// reconnect forever with a zero reconnect buffer (fail fast), TLS.
#pragma once

#include <string>
#include <vector>

#include "nats_handles.h"
#include "switchboard/common/status.h"
#include "switchboard/pubsub/nats_pubsub.h"

namespace switchboard::pubsub::internal {

// "a, b,c" -> {"a", "b", "c"} (blank entries dropped).
std::vector<std::string> SplitUrls(const std::string& urls);

// Builds nats.c options (callbacks are installed separately). Errors name
// the field.
Result<NatsOptionsPtr> BuildNatsOptions(const NatsOptions& options);

}  // namespace switchboard::pubsub::internal
