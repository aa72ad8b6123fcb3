// gzip of payloads, as Hatchet does it: each payload is its own gzip stream,
// applied only when the total payload size reaches the threshold (5 KiB by
// default). Decompression is capped so a gzip bomb cannot exhaust memory.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "switchboard/common/status.h"
#include "switchboard/pubsub/message.h"

namespace switchboard::pubsub {

// One gzip member (level 1: fast, like Go's gzip.BestSpeed).
std::string GzipCompress(std::string_view data, int level = 1);

// Decompresses a gzip stream (one or more members). ResourceExhausted when
// the output would exceed `max_output` bytes; InvalidArgument when the input
// is not valid gzip.
Result<std::string> GzipDecompress(std::string_view data, size_t max_output);

// Returns a compressed copy when the total payload bytes reach `threshold`
// and the message is not compressed already; otherwise an unchanged copy.
Message CompressMessage(const Message& message, size_t threshold, int level = 1);

// Decompresses a message marked compressed and clears the flag; the total
// decompressed payload bytes are capped at `max_output`.
Status DecompressMessage(Message* message, size_t max_output);

}  // namespace switchboard::pubsub
