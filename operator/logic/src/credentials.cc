#include "switchboard/operator_logic/credentials.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/rand.h>

#include <array>
#include <memory>
#include <string_view>

#include "switchboard/common/base64.h"

namespace switchboard::operator_logic {
namespace {

// libxcrypt's per-call scratch space is ~32 KiB: heap, not stack, and wiped
// on release because it held a password.
struct CryptData {
  crypt_data data{};
  ~CryptData() { OPENSSL_cleanse(&data, sizeof(data)); }
};

std::string OpenSslError() {
  unsigned long e = ERR_get_error();
  if (e == 0) return "unknown error";
  std::array<char, 256> buf{};
  ERR_error_string_n(e, buf.data(), buf.size());
  return buf.data();
}

bool IsBcryptChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '/';
}

}  // namespace

Result<std::string> GeneratePassword() {
  std::array<unsigned char, kPasswordEntropyBytes> raw{};
  if (RAND_bytes(raw.data(), static_cast<int>(raw.size())) != 1) {
    return Status::Internal("password generation: RAND_bytes failed: " + OpenSslError());
  }
  // URL-safe and unpadded, so the password needs no quoting in NATS config
  // or env files.
  std::string out =
      base64::EncodeUrl(std::string_view(reinterpret_cast<const char*>(raw.data()), raw.size()));
  OPENSSL_cleanse(raw.data(), raw.size());
  return out;
}

Result<std::string> BcryptHash(std::string_view password, int cost) {
  if (password.empty()) return Status::InvalidArgument("bcrypt: the password is empty");
  if (password.find('\0') != std::string_view::npos) {
    return Status::InvalidArgument("bcrypt: the password contains a NUL byte");
  }
  if (password.size() > 72) {
    return Status::InvalidArgument(
        "bcrypt: the password is longer than 72 bytes and would be truncated; use at most 72");
  }
  if (cost < 4 || cost > 31) {
    return Status::InvalidArgument("bcrypt: cost " + std::to_string(cost) + " is outside 4..31");
  }
  std::array<char, CRYPT_GENSALT_OUTPUT_SIZE> salt{};
  // nullptr entropy: libxcrypt reads the OS CSPRNG (getrandom) itself.
  if (crypt_gensalt_rn("$2b$", static_cast<unsigned long>(cost), nullptr, 0, salt.data(),
                       static_cast<int>(salt.size())) == nullptr) {
    return Status::Internal("bcrypt: crypt_gensalt_rn failed");
  }
  auto scratch = std::make_unique<CryptData>();
  const std::string pw(password);
  const char* out = crypt_rn(pw.c_str(), salt.data(), &scratch->data, sizeof(scratch->data));
  if (out == nullptr || out[0] == '*') return Status::Internal("bcrypt: crypt_rn failed");
  std::string hash(out);
  if (!IsBcryptHash(hash)) return Status::Internal("bcrypt: crypt_rn returned a malformed hash");
  return hash;
}

Result<bool> BcryptVerify(std::string_view password, std::string_view hash) {
  if (!IsBcryptHash(hash)) {
    return Status::InvalidArgument("bcrypt: the stored hash is not a bcrypt hash ($2a$/$2b$/$2y$)");
  }
  if (password.find('\0') != std::string_view::npos) return false;
  auto scratch = std::make_unique<CryptData>();
  const std::string pw(password);
  const std::string setting(hash);
  const char* out = crypt_rn(pw.c_str(), setting.c_str(), &scratch->data, sizeof(scratch->data));
  if (out == nullptr || out[0] == '*') return Status::Internal("bcrypt: crypt_rn failed");
  std::string_view computed(out);
  if (computed.size() != hash.size()) return false;
  return CRYPTO_memcmp(computed.data(), hash.data(), hash.size()) == 0;
}

bool IsBcryptHash(std::string_view hash) {
  // $2b$11$ + 22 salt + 31 hash characters.
  if (hash.size() != 60 || hash[0] != '$' || hash[1] != '2' || hash[3] != '$' || hash[6] != '$') {
    return false;
  }
  if (hash[2] != 'a' && hash[2] != 'b' && hash[2] != 'y') return false;
  if (hash[4] < '0' || hash[4] > '3' || hash[5] < '0' || hash[5] > '9') return false;
  for (size_t i = 7; i < hash.size(); ++i) {
    if (!IsBcryptChar(hash[i])) return false;
  }
  return true;
}

}  // namespace switchboard::operator_logic
