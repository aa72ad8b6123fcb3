#include "hash.h"

#include <array>

#include "switchboard/operator_logic/render.h"

namespace switchboard::operator_logic {
namespace internal {

// SHA-256 cannot fail on a valid context; a failed allocation is an
// out-of-memory like any other in this process.
Sha256::Sha256() : ctx_(EVP_MD_CTX_new(), &EVP_MD_CTX_free) {
  EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr);
}

void Sha256::Update(std::string_view bytes) {
  EVP_DigestUpdate(ctx_.get(), bytes.data(), bytes.size());
}

std::string Sha256::Hex() {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx_.get(), digest.data(), &len);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0xf]);
  }
  return out;
}

std::string TaggedSha256(std::string_view bytes) {
  Sha256 h;
  h.Update(bytes);
  return "sha256:" + h.Hex();
}

}  // namespace internal

std::string ConfigHash(std::string_view text) { return internal::TaggedSha256(text); }

}  // namespace switchboard::operator_logic
