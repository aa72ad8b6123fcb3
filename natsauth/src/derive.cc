#include "switchboard/natsauth/derive.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <string>

namespace switchboard::natsauth {

Result<KeyPair> DeriveKeyPair(const KeyPair& parent, KeyType type, std::string_view label) {
  if (type == KeyType::kSeed || type == KeyType::kCurve) {
    return Status::InvalidArgument("derive: a derived key must be a signing kind, not " +
                                   std::string(KeyTypeName(type)));
  }
  std::string encoded = parent.Seed();
  auto seed = DecodeSeed(encoded);
  OPENSSL_cleanse(encoded.data(), encoded.size());
  if (!seed.ok()) return seed.status();
  RawKey child{};
  unsigned int len = 0;
  const unsigned char* out =
      HMAC(EVP_sha256(), seed->bytes.data(), static_cast<int>(seed->bytes.size()),
           reinterpret_cast<const unsigned char*>(label.data()), label.size(), child.data(), &len);
  if (out == nullptr || len != child.size()) {
    OPENSSL_cleanse(child.data(), child.size());
    return Status::Internal("derive: HMAC-SHA256 failed");
  }
  auto pair = KeyPair::FromRawSeed(type, child);
  OPENSSL_cleanse(child.data(), child.size());
  return pair;
}

}  // namespace switchboard::natsauth
