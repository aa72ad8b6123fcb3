// Standard base64 with padding (RFC 4648 §4): the one implementation every
// component uses (Secret data, kubeconfig *-data fields, AdmissionReview
// patches, Hatchet payloads on the wire).
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

}  // namespace switchboard::base64
