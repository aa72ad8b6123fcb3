// Fuzzes the nkey codec with arbitrary text. Properties: never crashes; a
// public key that decodes re-encodes to the same text and is of exactly one
// kind; base32 that decodes re-encodes to text that decodes to the same
// bytes; a seed that decodes re-encodes to the same seed, loads as a key
// pair whose public key is of the seed's kind and (except X25519) signs
// what it verifies; no error message quotes a seed-like input; Verify of
// arbitrary key, message and signature (the input split at newlines)
// only succeeds for a well-formed key.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "switchboard/natsauth/nkey.h"

namespace na = switchboard::natsauth;

namespace {

constexpr na::KeyType kPublicKinds[] = {na::KeyType::kServer,   na::KeyType::kCluster,
                                        na::KeyType::kOperator, na::KeyType::kAccount,
                                        na::KeyType::kUser,     na::KeyType::kCurve};

// Long enough, and only base32 letters, that an error message cannot
// contain it by accident: such an input in a message would be a quoted seed.
bool SeedLike(std::string_view text) {
  if (text.size() < 20) return false;
  for (char c : text) {
    if (!((c >= 'A' && c <= 'Z') || (c >= '2' && c <= '7'))) return false;
  }
  return true;
}

void NotQuoted(const switchboard::Status& status, std::string_view text) {
  if (!status.ok() && SeedLike(text) && status.message().find(text) != std::string::npos) {
    std::abort();
  }
}

void Base32(std::string_view text) {
  auto bytes = na::Base32Decode(text);
  if (!bytes.ok()) return;
  if (bytes->size() != text.size() * 5 / 8) std::abort();
  auto again = na::Base32Decode(na::Base32Encode(*bytes));
  if (!again.ok() || *again != *bytes) std::abort();
}

void PublicKey(std::string_view text) {
  auto key = na::DecodePublicKey(text);
  for (na::KeyType kind : kPublicKinds) {
    auto typed = na::DecodePublicKey(text, kind);
    bool want = key.ok() && key->type == kind;
    if (typed.ok() != want || na::IsPublicKey(text, kind) != want) std::abort();
    if (typed.ok() && typed->raw != key->raw) std::abort();
  }
  if (!key.ok()) return;
  if (na::EncodePublicKey(key->type, key->raw) != text) std::abort();
}

void Seed(std::string_view text) {
  auto seed = na::DecodeSeed(text);
  NotQuoted(seed.status(), text);
  auto pair = na::KeyPair::FromSeed(text);
  NotQuoted(pair.status(), text);
  if (seed.ok() != pair.ok()) std::abort();
  if (!seed.ok()) return;
  auto again = na::DecodeSeed(na::EncodeSeed(seed->type, seed->bytes));
  if (!again.ok() || again->type != seed->type || again->bytes != seed->bytes) std::abort();
  if (pair->type() != seed->type || !na::IsPublicKey(pair->public_key(), seed->type)) {
    std::abort();
  }
  if (pair->Seed() != na::EncodeSeed(seed->type, seed->bytes)) std::abort();
  if (seed->type == na::KeyType::kCurve) {
    if (pair->Sign(text).ok()) std::abort();  // X25519 cannot sign
    return;
  }
  auto sig = pair->Sign(text);
  if (!sig.ok() || sig->size() != na::kSignatureSize) std::abort();
  if (!na::Verify(pair->public_key(), text, *sig).ok()) std::abort();
}

void VerifyParts(std::string_view input) {
  size_t a = input.find('\n');
  if (a == std::string_view::npos) return;
  size_t b = input.find('\n', a + 1);
  if (b == std::string_view::npos) return;
  std::string_view key = input.substr(0, a);
  std::string_view signature = input.substr(a + 1, b - a - 1);
  std::string_view message = input.substr(b + 1);
  if (na::Verify(key, message, signature).ok() && !na::DecodePublicKey(key).ok()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  Base32(input);
  PublicKey(input);
  Seed(input);
  VerifyParts(input);
  return 0;
}
