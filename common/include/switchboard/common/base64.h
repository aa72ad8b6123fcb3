// Standard base64 with padding (RFC 4648 §4): the one implementation every
// component uses (Secret data, kubeconfig *-data fields, AdmissionReview
// patches, Hatchet payloads on the wire), and its URL-safe unpadded variant
// for JWTs.
//
// Decoding follows Go's base64.StdEncoding, which Kubernetes and Hatchet's
// encoding/json use: padding required, \r and \n skipped, anything else
// invalid. Table-driven and fast enough for 8 MiB payloads (see
// BENCHMARKS.md, pubsub-runtime codec).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace switchboard::base64 {

size_t EncodedSize(size_t n);
void EncodeTo(std::string_view in, std::string* out);  // appends
std::string Encode(std::string_view in);

// Decodes into *out (replacing it). False on invalid input.
bool Decode(std::string_view in, std::string* out);
std::optional<std::string> Decode(std::string_view in);

// Like Decode but refuses \r and \n too: for text taken straight from a JSON
// string, where a raw newline is not allowed.
bool DecodeStrict(std::string_view in, std::string* out);

// base64url without padding (RFC 4648 §5, Go's base64.RawURLEncoding): the
// segments of a JWT. Decoding refuses padding, the standard alphabet's '+'
// and '/', newlines, and a length that no encoding produces (n % 4 == 1).
std::string EncodeUrl(std::string_view in);
bool DecodeUrl(std::string_view in, std::string* out);
std::optional<std::string> DecodeUrl(std::string_view in);

}  // namespace switchboard::base64
