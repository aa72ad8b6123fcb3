// Passwords and their bcrypt hashes: the only place the operator touches
// secret material. Pure except for the CSPRNG.
//
// Cost model: BcryptHash and BcryptVerify at cost 11 are slow by design
// (figures in BENCHMARKS.md). A hash is therefore computed once per password and stored
// beside it (credentials Secret key `bcrypt`, see rotation.h); a render only
// ever reads stored hashes.
//
// Thread-safe: every function may be called from any thread concurrently.
#pragma once

#include <string>
#include <string_view>

#include "switchboard/common/status.h"

namespace switchboard::operator_logic {

// bcrypt cost for hashes of passwords a user chose: 2^11 rounds, slow
// enough to matter to a guesser of a low-entropy password.
inline constexpr int kBcryptCost = 11;

// bcrypt cost for passwords the operator generated (kPasswordEntropyBytes of
// CSPRNG output). A work factor only slows guessing of low-entropy secrets;
// 256 random bits cannot be guessed at any cost, while nats-server pays the
// cost on every client CONNECT and the operator once per installation, so
// a reconnect storm at a high cost can outlast the server's authentication
// timeout (the figures: BENCHMARKS.md, operator and auth callout).
inline constexpr int kGeneratedPasswordBcryptCost = 6;

// The one bcrypt policy: kGeneratedPasswordBcryptCost for passwords the
// operator generated, kBcryptCost for passwords a user chose
// (passwordSecretRef).
constexpr int BcryptCostFor(bool user_supplied) {
  return user_supplied ? kBcryptCost : kGeneratedPasswordBcryptCost;
}

// Bytes of CSPRNG entropy in a generated password.
inline constexpr int kPasswordEntropyBytes = 32;

// One NATS user's credentials as the operator keeps them.
struct Credentials {
  std::string username;
  std::string password;  // plaintext; only ever in Secrets
  std::string bcrypt;    // BcryptHash(password)
  bool operator==(const Credentials&) const = default;
};

// A new password: kPasswordEntropyBytes from OpenSSL RAND_bytes, encoded as
// unpadded base64url (43 characters of [A-Za-z0-9_-]): safe in URLs, env
// values, YAML and NATS config strings without quoting. Fails (kInternal)
// only when the CSPRNG is not seeded.
Result<std::string> GeneratePassword();

// bcrypt ($2b$, `cost`) of `password` with a fresh random salt via
// libxcrypt. kInvalidArgument for an empty password, a password containing
// NUL or longer than 72 bytes (bcrypt would silently truncate it), or a cost
// outside 4..31.
Result<std::string> BcryptHash(std::string_view password, int cost = kBcryptCost);

// Whether `hash` (a $2a$/$2b$/$2y$ bcrypt string) is the hash of `password`.
// Compares in constant time. kInvalidArgument when `hash` is not a
// well-formed bcrypt hash (see IsBcryptHash).
Result<bool> BcryptVerify(std::string_view password, std::string_view hash);

// Syntax check only: "$2[aby]$NN$" followed by 53 characters of bcrypt's
// base64 alphabet [./A-Za-z0-9].
bool IsBcryptHash(std::string_view hash);

}  // namespace switchboard::operator_logic
