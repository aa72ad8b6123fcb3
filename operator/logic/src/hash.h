// SHA-256 over OpenSSL's EVP interface (RAII context). Private.
#pragma once

#include <openssl/evp.h>

#include <memory>
#include <string>
#include <string_view>

namespace switchboard::operator_logic::internal {

// Incremental SHA-256; Hex() finishes it (call once).
class Sha256 {
 public:
  Sha256();
  void Update(std::string_view bytes);
  std::string Hex();  // lowercase hex of the digest

 private:
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx_;
};

// "sha256:" + hex.
std::string TaggedSha256(std::string_view bytes);

}  // namespace switchboard::operator_logic::internal
