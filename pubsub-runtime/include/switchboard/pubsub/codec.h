// The JSON wire format of Message, exactly as Go's encoding/json writes and
// reads it (DESIGN.md §2).
//
// Encode: keys in struct order; HTML-safe string escaping (<, >, & as \u003c
// ...; U+2028/2029 escaped; invalid UTF-8 becomes U+FFFD); payloads as
// standard base64 with padding; nil payloads/otel_carrier as null; map keys
// sorted; `compressed` only when true; `published_at` only when non-zero, as
// RFC 3339 with trimmed nanoseconds.
//
// Decode accepts what Go accepts: unknown keys ignored, null for any field
// (leaves it unset), keys matched case-insensitively (Unicode simple
// folding, so "ID", "Messages", "tenant_ID" all match), the later of two
// duplicate keys wins, tenant_id in any form google/uuid parses. Malformed
// input yields InvalidArgument naming the field or byte offset; it never
// throws or crashes. One deliberate difference: a null element inside
// "messages" (Go's nil []byte; Hatchet never sends one) becomes an empty
// payload.
#pragma once

#include <string>
#include <string_view>

#include "switchboard/common/status.h"
#include "switchboard/pubsub/message.h"

namespace switchboard::pubsub {

std::string EncodeMessage(const Message& message);
// Appends to `out` (lets callers reuse a buffer).
void EncodeMessageTo(const Message& message, std::string* out);

Result<Message> DecodeMessage(std::string_view json);

// Decodes into an existing message, reusing its buffers (subscribers decode
// every message into the same object). On success *message equals what
// DecodeMessage returns; on error its contents are unspecified.
Status DecodeMessageInto(std::string_view json, Message* message);

// Exact encoded size without building the text (used to plan chunks).
size_t EncodedSize(const Message& message);

}  // namespace switchboard::pubsub
