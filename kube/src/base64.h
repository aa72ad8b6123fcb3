// Standard base64 (RFC 4648, with padding) for kubeconfig *-data fields.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace switchboard::kube::internal {

// Whitespace is skipped; nullopt on any other invalid character or length.
std::optional<std::string> Base64Decode(std::string_view in);
std::string Base64Encode(std::string_view in);

}  // namespace switchboard::kube::internal
