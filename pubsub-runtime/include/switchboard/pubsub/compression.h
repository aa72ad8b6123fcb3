// gzip of payloads in Hatchet's format: each payload is its own gzip stream
// and the message says so with `compressed`. Publishing compresses only when
// the total payload size reaches the threshold (5 KiB by default) and every
// payload comes out smaller than it went in; anything else goes out as it
// was, `compressed` unset. Decompression is capped so a gzip bomb cannot
// exhaust memory.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/common/status.h"
#include "switchboard/pubsub/message.h"

namespace switchboard::pubsub {

// One gzip member (level 1: fast, like Go's gzip.BestSpeed). Always
// compresses, even when the result is larger than `data`.
std::string GzipCompress(std::string_view data, int level = 1);

// Decompresses a gzip stream (one or more members). ResourceExhausted when
// the output would exceed `max_output` bytes; InvalidArgument when the input
// is not valid gzip.
Result<std::string> GzipDecompress(std::string_view data, size_t max_output);

// Payloads of at least kSampledFrom bytes are declined without gzipping
// all of them when their first kSample bytes do not shrink.
inline constexpr size_t kSampledFrom = 64 * 1024;
inline constexpr size_t kSample = 8 * 1024;

// One gzip member, or std::nullopt when it would not be smaller than `data`
// (random or already compressed bytes, payloads of a few bytes) or, for a
// payload of kSampledFrom bytes or more, when its first kSample bytes do not
// shrink. The output buffer is sized by the input, not by gzip's
// worst-case bound.
std::optional<std::string> GzipCompressIfSmaller(std::string_view data, int level = 1);

// Each payload gzipped, or std::nullopt as soon as one of them would not be
// smaller (the `compressed` flag covers the whole message, so one payload
// that does not shrink keeps the whole message uncompressed).
std::optional<std::vector<std::string>> GzipPayloadsIfSmaller(
    const std::vector<std::string>& payloads, int level = 1);

// A compressed copy of `message` when its payloads total at least
// `threshold` bytes, it is not compressed already and every payload shrinks;
// std::nullopt otherwise (publish `message` as it is). The payloads of
// `message` are not copied.
std::optional<Message> TryCompressMessage(const Message& message, size_t threshold, int level = 1);

// TryCompressMessage, or an unchanged copy when it declines.
Message CompressMessage(const Message& message, size_t threshold, int level = 1);

// Decompresses a message marked compressed and clears the flag; the total
// decompressed payload bytes are capped at `max_output`.
Status DecompressMessage(Message* message, size_t max_output);

}  // namespace switchboard::pubsub
