// Splitting a message that is too large for the server (DESIGN.md §2): when
// the encoded body exceeds max_payload, the payloads are cut into chunks of
// max(n/2, 1) and each chunk is handled the same way recursively, with the
// same metadata. Every payload ends up in exactly one body, in order; a
// single payload that is too large on its own is an error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "switchboard/common/status.h"
#include "switchboard/pubsub/message.h"

namespace switchboard::pubsub {

// The encoded bodies to publish, in order. ResourceExhausted when a single
// payload does not fit, naming its size and the limit.
Result<std::vector<std::string>> EncodeChunks(const Message& message, int64_t max_payload);

}  // namespace switchboard::pubsub
