// Standard base64 with padding (RFC 4648 §4), as Go's encoding/json writes
// []byte, and a strict decoder like Go's base64.StdEncoding (which
// encoding/json uses; it also skips \r and \n).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace switchboard::pubsub::internal {

size_t Base64EncodedSize(size_t n);
void Base64EncodeTo(std::string_view in, std::string* out);  // appends
// Decodes into *out (replacing it). False on invalid input.
bool Base64Decode(std::string_view in, std::string* out);
// Like Base64Decode but refuses \r and \n too: for text taken straight from
// a JSON string, where a raw newline is not allowed.
bool Base64DecodeStrict(std::string_view in, std::string* out);

}  // namespace switchboard::pubsub::internal
