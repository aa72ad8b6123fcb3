// Standard base64 with padding (RFC 4648 §4), what AdmissionResponse.patch
// carries. Kept here so the admission library needs no OpenSSL.
#pragma once

#include <string>
#include <string_view>

namespace switchboard::admission {

std::string Base64Encode(std::string_view data);

}  // namespace switchboard::admission
