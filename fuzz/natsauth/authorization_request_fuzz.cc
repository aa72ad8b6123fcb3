// Fuzzes the decoder of what a NATS server (or anyone who can publish on
// $SYS.REQ.USER.AUTH) sends the authorizer. Each input is used twice:
//   - as a whole token: the header and claims JSON are parsed before the
//     signature is checked, so this reaches everything up to the signature;
//   - when it starts with '{', as the claims JSON itself, signed here with a
//     fixed server key, which reaches every field reader behind the
//     signature check.
// Properties: never crashes; a decoded request has the audience, a user key
// as user_nkey and, when asked, the expected subject; asking for a subject
// only refuses requests for another subject; no error message quotes the
// client's password (connect_opts.pass) unless the same text is elsewhere in
// the claims; error messages are bounded printable ASCII (the authorizer
// logs them); the user and response decoders take the same bytes without
// crashing.
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/common/base64.h"
#include "switchboard/natsauth/jwt.h"
#include "switchboard/natsauth/nkey.h"

namespace na = switchboard::natsauth;
using nlohmann::json;

namespace {

// One second after the request in tests/natsauth/testdata was issued, so it
// decodes completely; the signed seeds use the same window.
constexpr int64_t kNow = 1796160983;
// The auth_callout issuer the seeds name as their subject.
constexpr std::string_view kIssuer = "ABJHLOVMPA4CI6R5KLNGOB4GSLNIY7IOUPAJC4YFNDLQVIOBYQGUWVLA";
constexpr std::string_view kHeader = "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ";

const na::KeyPair& ServerKey() {
  // A fixed seed, so signed inputs replay the same. Its public key,
  // NB43KVROR7TFJ6KAPCYRF2FJROTZAH4FHLTJLPWX4DRZCC5NASLGJYZP, is the iss of
  // the signed seeds in fuzz/corpus/authorization_request_fuzz/.
  static const na::KeyPair key = [] {
    na::RawKey raw{};
    for (size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<uint8_t>(i + 1);
    auto pair = na::KeyPair::FromRawSeed(na::KeyType::kServer, raw);
    if (!pair.ok()) std::abort();
    return std::move(pair).value();
  }();
  return key;
}

// How many of the claims' keys and leaf values contain `needle`. A stack,
// not recursion: the input may nest as deep as its length allows.
int Occurrences(const json& root, const std::string& needle) {
  int n = 0;
  std::vector<const json*> todo{&root};
  while (!todo.empty()) {
    const json* j = todo.back();
    todo.pop_back();
    if (j->is_object()) {
      for (auto it = j->begin(); it != j->end(); ++it) {
        if (it.key().find(needle) != std::string::npos) ++n;
        todo.push_back(&it.value());
      }
    } else if (j->is_array()) {
      for (const auto& e : *j) todo.push_back(&e);
    } else {
      std::string leaf = j->is_string() ? j->get<std::string>() : j->dump();
      if (leaf.find(needle) != std::string::npos) ++n;
    }
  }
  return n;
}

// An error message is logged by the authorizer: bounded, one line of
// printable ASCII, whatever the input quoted into it.
void MessageIsLoggable(const switchboard::Status& status) {
  if (status.ok()) return;
  const std::string& m = status.message();
  if (m.size() > 1024) std::abort();
  for (unsigned char c : m) {
    if (c < 0x20 || c >= 0x7f) std::abort();
  }
}

// The password must not reach an error message.
void PasswordNotQuoted(std::string_view claims_text, const switchboard::Status& status) {
  if (status.ok()) return;
  json claims = json::parse(claims_text, nullptr, false);
  if (!claims.is_object()) return;
  const json* pass = nullptr;
  auto nats = claims.find("nats");
  if (nats == claims.end() || !nats->is_object()) return;
  auto opts = nats->find("connect_opts");
  if (opts == nats->end() || !opts->is_object()) return;
  auto p = opts->find("pass");
  if (p == opts->end() || !p->is_string()) return;
  pass = &*p;
  const std::string& secret = pass->get_ref<const std::string&>();
  if (secret.size() < 4) return;  // too short to tell from the message's own words
  if (Occurrences(claims, secret) != 1) return;
  if (status.message().find(secret) != std::string::npos) std::abort();
}

void CheckDecoded(std::string_view token, std::string_view claims_text) {
  auto any = na::DecodeAuthorizationRequest(token, kNow);
  auto ours = na::DecodeAuthorizationRequest(token, kNow, kIssuer);
  PasswordNotQuoted(claims_text, any.status());
  PasswordNotQuoted(claims_text, ours.status());
  MessageIsLoggable(any.status());
  MessageIsLoggable(ours.status());
  if (any.ok()) {
    if (any->claims.audience != na::kAuthorizationRequestAudience) std::abort();
    if (!na::IsPublicKey(any->user_nkey, na::KeyType::kUser)) std::abort();
    if (!na::IsPublicKey(any->claims.issuer, na::KeyType::kServer)) std::abort();
    bool for_us = any->claims.subject == kIssuer;
    if (ours.ok() != for_us) std::abort();
    if (!for_us && ours.status().code() != switchboard::StatusCode::kPermissionDenied) {
      std::abort();
    }
  } else if (ours.ok()) {
    std::abort();  // naming a subject never makes a refused request pass
  }
  // Other claim types through the same decoding: only must not crash.
  (void)na::DecodeUserClaims(token, kNow);
  (void)na::DecodeAuthorizationResponse(token, kNow);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);

  std::string claims_text;
  size_t dot1 = input.find('.');
  size_t dot2 = dot1 == std::string_view::npos ? dot1 : input.find('.', dot1 + 1);
  if (dot2 != std::string_view::npos) {
    switchboard::base64::DecodeUrl(input.substr(dot1 + 1, dot2 - dot1 - 1), &claims_text);
  }
  CheckDecoded(input, claims_text);

  if (!input.empty() && input.front() == '{') {
    std::string token(kHeader);
    token += '.';
    token += switchboard::base64::EncodeUrl(input);
    auto sig = ServerKey().Sign(token);
    if (!sig.ok()) std::abort();
    token += '.';
    token += switchboard::base64::EncodeUrl(*sig);
    CheckDecoded(token, input);
  }
  return 0;
}
