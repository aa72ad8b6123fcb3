#include "switchboard/natsauth/nkey.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <string>
#include <utility>

namespace switchboard::natsauth {
namespace {

constexpr char kBase32Alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

// OpenSSL's reason for the last failure (never key material), clearing its
// queue so the next failure reports its own.
std::string OpenSslError() {
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "no OpenSSL error recorded";
  char buf[256];
  ERR_error_string_n(code, buf, sizeof buf);
  return buf;
}

// Wipes a buffer that held seed bytes when it goes out of scope.
struct Wipe {
  std::string& s;
  ~Wipe() { OPENSSL_cleanse(s.data(), s.size()); }
};

bool IsPublicType(uint8_t b) {
  switch (static_cast<KeyType>(b)) {
    case KeyType::kServer:
    case KeyType::kCluster:
    case KeyType::kOperator:
    case KeyType::kAccount:
    case KeyType::kUser:
    case KeyType::kCurve:
      return true;
    case KeyType::kSeed:
      return false;
  }
  return false;
}

char Letter(uint8_t prefix) { return kBase32Alphabet[prefix >> 3]; }

std::string Describe(uint8_t prefix) {
  std::string s = "'";
  s += Letter(prefix);
  s += "'";
  if (IsPublicType(prefix) || static_cast<KeyType>(prefix) == KeyType::kSeed) {
    s += " (";
    s += KeyTypeName(static_cast<KeyType>(prefix));
    s += ")";
  }
  return s;
}

std::string WithChecksum(std::string raw) {
  uint16_t crc = Crc16(raw);
  raw.push_back(static_cast<char>(crc & 0xff));
  raw.push_back(static_cast<char>(crc >> 8));
  return raw;
}

// Decodes text that must hold `prefix_len` prefix bytes and a raw key, and
// checks its checksum. The result still carries the prefix bytes.
Result<std::string> DecodeFramed(std::string_view text, size_t prefix_len, std::string_view what) {
  auto decoded = Base32Decode(text);
  if (!decoded.ok()) return decoded.status().Annotate(what);
  std::string& raw = *decoded;
  size_t want = prefix_len + kRawKeySize + 2;
  if (raw.size() != want) {
    OPENSSL_cleanse(raw.data(), raw.size());
    return Status::InvalidArgument(std::string(what) + ": " + std::to_string(text.size()) +
                                   " characters decode to " + std::to_string(raw.size()) +
                                   " bytes, want " + std::to_string(want) + " (" +
                                   std::to_string((want * 8 + 4) / 5) + " characters)");
  }
  uint16_t stored = static_cast<uint16_t>(static_cast<uint8_t>(raw[want - 2]) |
                                          (static_cast<uint8_t>(raw[want - 1]) << 8));
  if (Crc16(std::string_view(raw).substr(0, want - 2)) != stored) {
    OPENSSL_cleanse(raw.data(), raw.size());
    return Status::InvalidArgument(std::string(what) +
                                   ": checksum mismatch (a mistyped or truncated key)");
  }
  return decoded;
}

Result<PkeyPtr> PkeyFromSeed(KeyType type, const RawKey& raw) {
  int id = type == KeyType::kCurve ? EVP_PKEY_X25519 : EVP_PKEY_ED25519;
  PkeyPtr pkey(EVP_PKEY_new_raw_private_key(id, nullptr, raw.data(), raw.size()));
  if (!pkey) return Status::Internal("nkey: loading the seed into OpenSSL: " + OpenSslError());
  return pkey;
}

}  // namespace

std::string_view KeyTypeName(KeyType type) {
  switch (type) {
    case KeyType::kSeed:
      return "seed";
    case KeyType::kServer:
      return "server";
    case KeyType::kCluster:
      return "cluster";
    case KeyType::kOperator:
      return "operator";
    case KeyType::kAccount:
      return "account";
    case KeyType::kUser:
      return "user";
    case KeyType::kCurve:
      return "curve";
  }
  return "unknown";
}

std::string Base32Encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() * 8 + 4) / 5);
  uint32_t buffer = 0;
  int bits = 0;
  for (unsigned char c : bytes) {
    buffer = (buffer << 8) | c;
    bits += 8;
    while (bits >= 5) {
      out.push_back(kBase32Alphabet[(buffer >> (bits - 5)) & 31]);
      bits -= 5;
    }
  }
  if (bits > 0) out.push_back(kBase32Alphabet[(buffer << (5 - bits)) & 31]);
  return out;
}

Result<std::string> Base32Decode(std::string_view text) {
  // Unpadded base32 ends in a group of 2, 4, 5 or 7 characters (1 to 4
  // bytes); 1, 3 or 6 leftover characters cannot come from any input.
  switch (text.size() % 8) {
    case 1:
    case 3:
    case 6:
      return Status::InvalidArgument("not base32: a length of " + std::to_string(text.size()) +
                                     " characters is impossible without padding");
  }
  std::string out;
  out.reserve(text.size() * 5 / 8);
  uint32_t buffer = 0;
  int bits = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    uint32_t v;
    if (c >= 'A' && c <= 'Z') {
      v = static_cast<uint32_t>(c - 'A');
    } else if (c >= '2' && c <= '7') {
      v = static_cast<uint32_t>(c - '2' + 26);
    } else {
      // The character itself is not quoted: it may be part of a seed.
      OPENSSL_cleanse(out.data(), out.size());
      return Status::InvalidArgument("not base32: character " + std::to_string(i + 1) +
                                     " is outside A-Z and 2-7");
    }
    buffer = (buffer << 5) | v;
    bits += 5;
    if (bits >= 8) {
      out.push_back(static_cast<char>((buffer >> (bits - 8)) & 0xff));
      bits -= 8;
    }
  }
  OPENSSL_cleanse(&buffer, sizeof buffer);
  return out;
}

uint16_t Crc16(std::string_view bytes) {
  // CRC-16/XMODEM: polynomial 0x1021, initial value 0, no reflection.
  uint16_t crc = 0;
  for (unsigned char b : bytes) {
    crc ^= static_cast<uint16_t>(b << 8);
    for (int i = 0; i < 8; ++i) {
      crc = (crc & 0x8000) ? static_cast<uint16_t>((crc << 1) ^ 0x1021)
                           : static_cast<uint16_t>(crc << 1);
    }
  }
  return crc;
}

std::string EncodePublicKey(KeyType type, const RawKey& raw) {
  std::string framed(1, static_cast<char>(type));
  framed.append(reinterpret_cast<const char*>(raw.data()), raw.size());
  return Base32Encode(WithChecksum(std::move(framed)));
}

Result<PublicKey> DecodePublicKey(std::string_view text) {
  auto framed = DecodeFramed(text, 1, "public nkey");
  if (!framed.ok()) return framed.status();
  auto prefix = static_cast<uint8_t>((*framed)[0]);
  if (!IsPublicType(prefix)) {
    return Status::InvalidArgument("public nkey: prefix " + Describe(prefix) +
                                   " is not a public key's (A, U, N, O, C or X)");
  }
  PublicKey key{static_cast<KeyType>(prefix), {}};
  std::copy(framed->begin() + 1, framed->begin() + 1 + kRawKeySize, key.raw.begin());
  return key;
}

Result<PublicKey> DecodePublicKey(std::string_view text, KeyType expected) {
  auto key = DecodePublicKey(text);
  if (!key.ok()) return key;
  if (key->type != expected) {
    bool vowel = expected == KeyType::kAccount || expected == KeyType::kOperator;
    return Status::InvalidArgument("public nkey " + std::string(text) + ": prefix " +
                                   Describe(static_cast<uint8_t>(key->type)) + " where " +
                                   (vowel ? "an " : "a ") + std::string(KeyTypeName(expected)) +
                                   " key (" + Letter(static_cast<uint8_t>(expected)) +
                                   ") is expected");
  }
  return key;
}

bool IsPublicKey(std::string_view text, KeyType expected) {
  return DecodePublicKey(text, expected).ok();
}

RawSeed::~RawSeed() { OPENSSL_cleanse(bytes.data(), bytes.size()); }

std::string EncodeSeed(KeyType type, const RawKey& raw) {
  auto t = static_cast<uint8_t>(type);
  std::string framed;
  Wipe wipe_framed{framed};
  framed.push_back(static_cast<char>(static_cast<uint8_t>(KeyType::kSeed) | (t >> 5)));
  framed.push_back(static_cast<char>((t & 31) << 3));
  framed.append(reinterpret_cast<const char*>(raw.data()), raw.size());
  std::string with_crc = WithChecksum(framed);
  Wipe wipe_crc{with_crc};
  return Base32Encode(with_crc);
}

Result<RawSeed> DecodeSeed(std::string_view text) {
  auto framed = DecodeFramed(text, 2, "nkey seed");
  if (!framed.ok()) return framed.status();
  Wipe wipe{*framed};
  auto b0 = static_cast<uint8_t>((*framed)[0]), b1 = static_cast<uint8_t>((*framed)[1]);
  auto kind = static_cast<uint8_t>(b0 & 0xf8);
  if (kind != static_cast<uint8_t>(KeyType::kSeed)) {
    return Status::InvalidArgument("nkey seed: prefix " + Describe(kind) +
                                   " where a seed (S) is expected");
  }
  auto type = static_cast<uint8_t>(((b0 & 7) << 5) | ((b1 & 0xf8) >> 3));
  if (!IsPublicType(type) || (b1 & 7) != 0) {
    return Status::InvalidArgument("nkey seed: its second letter names no kind of key");
  }
  RawSeed seed{static_cast<KeyType>(type), {}};
  std::copy(framed->begin() + 2, framed->begin() + 2 + kRawKeySize, seed.bytes.begin());
  return seed;
}

struct KeyPair::Key {
  PkeyPtr pkey;
  RawKey seed;
  ~Key() { OPENSSL_cleanse(seed.data(), seed.size()); }
};

KeyPair::KeyPair(KeyType type, std::unique_ptr<Key> key, std::string public_key)
    : type_(type), key_(std::move(key)), public_key_(std::move(public_key)) {}
KeyPair::KeyPair(KeyPair&&) noexcept = default;
KeyPair& KeyPair::operator=(KeyPair&&) noexcept = default;
KeyPair::~KeyPair() = default;

Result<KeyPair> KeyPair::FromRawSeed(KeyType type, const RawKey& raw) {
  if (!IsPublicType(static_cast<uint8_t>(type))) {
    return Status::InvalidArgument("nkey: a seed must be for a public kind of key, not " +
                                   std::string(KeyTypeName(type)));
  }
  auto pkey = PkeyFromSeed(type, raw);
  if (!pkey.ok()) return pkey.status();
  RawKey pub{};
  size_t len = pub.size();
  if (EVP_PKEY_get_raw_public_key(pkey->get(), pub.data(), &len) != 1 || len != pub.size()) {
    return Status::Internal("nkey: deriving the public key: " + OpenSslError());
  }
  auto key = std::make_unique<Key>();
  key->pkey = std::move(*pkey);
  key->seed = raw;
  return KeyPair(type, std::move(key), EncodePublicKey(type, pub));
}

Result<KeyPair> KeyPair::FromSeed(std::string_view encoded_seed) {
  auto seed = DecodeSeed(encoded_seed);
  if (!seed.ok()) return seed.status();
  return FromRawSeed(seed->type, seed->bytes);
}

Result<KeyPair> KeyPair::Generate(KeyType type) {
  RawKey raw{};
  if (RAND_bytes(raw.data(), static_cast<int>(raw.size())) != 1) {
    return Status::Internal("nkey: RAND_bytes failed: " + OpenSslError());
  }
  auto pair = FromRawSeed(type, raw);
  OPENSSL_cleanse(raw.data(), raw.size());
  return pair;
}

std::string KeyPair::Seed() const { return EncodeSeed(type_, key_->seed); }

Result<std::string> KeyPair::Sign(std::string_view message) const {
  if (type_ == KeyType::kCurve) {
    return Status::FailedPrecondition("nkey: a curve (X) key encrypts; it cannot sign");
  }
  MdCtxPtr ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key_->pkey.get()) != 1) {
    return Status::Internal("nkey: sign: " + OpenSslError());
  }
  std::string sig(kSignatureSize, '\0');
  size_t len = sig.size();
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len,
                     reinterpret_cast<const unsigned char*>(message.data()), message.size()) != 1 ||
      len != kSignatureSize) {
    return Status::Internal("nkey: sign: " + OpenSslError());
  }
  return sig;
}

Status Verify(std::string_view public_key, std::string_view message, std::string_view signature) {
  auto key = DecodePublicKey(public_key);
  if (!key.ok()) return key.status();
  if (key->type == KeyType::kCurve) {
    return Status::InvalidArgument("nkey: a curve (X) key makes no signatures to verify");
  }
  if (signature.size() != kSignatureSize) {
    return Status::InvalidArgument("nkey: an ed25519 signature has 64 bytes, not " +
                                   std::to_string(signature.size()));
  }
  PkeyPtr pkey(
      EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, key->raw.data(), key->raw.size()));
  MdCtxPtr ctx(EVP_MD_CTX_new());
  if (!pkey || !ctx ||
      EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, pkey.get()) != 1) {
    return Status::Internal("nkey: verify: " + OpenSslError());
  }
  int rc = EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()),
                            signature.size(),
                            reinterpret_cast<const unsigned char*>(message.data()), message.size());
  if (rc == 1) return Status::Ok();
  ERR_clear_error();
  return Status::Unauthenticated("nkey: the signature does not match the message and " +
                                 std::string(public_key));
}

}  // namespace switchboard::natsauth
