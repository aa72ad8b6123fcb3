// NATS nkeys: the key encoding of nats-io/nkeys and ed25519 signatures
// through OpenSSL.
//
// An encoded key is base32 (RFC 4648 alphabet, no padding) of
// prefix || 32 raw bytes || CRC-16/XMODEM of both, little-endian. A public
// key has one prefix byte (56 characters: "A..." for an account); a seed has
// two, which spell "S" and then the public key's letter ("SA...").
//
// A seed is the secret: it never appears in an error message, and the
// copies this library keeps are wiped when released.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "switchboard/common/status.h"

namespace switchboard::natsauth {

// The prefix byte of each kind of key; its top five bits are the first
// base32 letter.
enum class KeyType : uint8_t {
  kSeed = 18 << 3,      // S
  kServer = 13 << 3,    // N
  kCluster = 2 << 3,    // C
  kOperator = 14 << 3,  // O
  kAccount = 0,         // A
  kUser = 20 << 3,      // U
  kCurve = 23 << 3,     // X: an X25519 key (xkey), for encryption, not signatures
};

// "account", "user", ...
std::string_view KeyTypeName(KeyType type);

inline constexpr size_t kRawKeySize = 32;
inline constexpr size_t kSignatureSize = 64;
using RawKey = std::array<uint8_t, kRawKeySize>;

// The codec's parts, exposed for their tests.
std::string Base32Encode(std::string_view bytes);
Result<std::string> Base32Decode(std::string_view text);
uint16_t Crc16(std::string_view bytes);

struct PublicKey {
  KeyType type;
  RawKey raw;
};

// type must be a public kind (not kSeed).
std::string EncodePublicKey(KeyType type, const RawKey& raw);
// Any public kind; checks the alphabet, the length, the checksum and the
// prefix, in that order.
Result<PublicKey> DecodePublicKey(std::string_view text);
// Also refuses a valid key of another kind.
Result<PublicKey> DecodePublicKey(std::string_view text, KeyType expected);
bool IsPublicKey(std::string_view text, KeyType expected);

// The raw half of a seed; wiped on destruction.
struct RawSeed {
  KeyType type;  // the kind of its public key
  RawKey bytes;
  ~RawSeed();
};

// type must be a public kind. The result is a secret.
std::string EncodeSeed(KeyType type, const RawKey& raw);
Result<RawSeed> DecodeSeed(std::string_view text);

// A key pair from a seed: ed25519 for every kind except kCurve, which is
// X25519 (its public key is derived, it cannot sign). Immutable, so one may
// sign from several threads at once.
class KeyPair {
 public:
  static Result<KeyPair> FromSeed(std::string_view encoded_seed);
  static Result<KeyPair> FromRawSeed(KeyType type, const RawKey& raw);
  // 32 bytes from OpenSSL's CSPRNG (RAND_bytes).
  static Result<KeyPair> Generate(KeyType type);

  KeyPair(KeyPair&&) noexcept;
  KeyPair& operator=(KeyPair&&) noexcept;
  KeyPair(const KeyPair&) = delete;
  KeyPair& operator=(const KeyPair&) = delete;
  ~KeyPair();

  KeyType type() const { return type_; }
  const std::string& public_key() const { return public_key_; }
  // The encoded seed: a secret.
  std::string Seed() const;

  // The 64-byte ed25519 signature of message.
  Result<std::string> Sign(std::string_view message) const;

  struct Key;  // the OpenSSL key and the raw seed

 private:
  KeyPair(KeyType type, std::unique_ptr<Key> key, std::string public_key);

  KeyType type_;
  std::unique_ptr<Key> key_;
  std::string public_key_;
};

// OK when signature is message's ed25519 signature by public_key (any
// signing kind); Unauthenticated when it is not; InvalidArgument when the
// key or the signature is malformed.
Status Verify(std::string_view public_key, std::string_view message, std::string_view signature);

}  // namespace switchboard::natsauth
