#include "claims_codec.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

#include "switchboard/common/base64.h"

namespace switchboard::natsauth::internal {
namespace {

// base64url of {"typ":"JWT","alg":"ed25519-nkey"}, the only header written.
constexpr std::string_view kHeader = "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ";

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}
std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

// JSON text as Go's json.Marshal writes it. nlohmann writes the same
// escapes for quotes, backslashes and control characters; Go also escapes
// <, > and & (for HTML) and U+2028/U+2029 (for JavaScript), which can only
// occur inside strings, so they are rewritten in the finished text. Invalid
// UTF-8 is refused rather than replaced.
Result<std::string> GoJson(const ordered_json& value, std::string_view what) {
  std::string text;
  try {
    text = value.dump();
  } catch (const json::exception&) {
    return Status::InvalidArgument(std::string(what) + ": a claim is not valid UTF-8");
  }
  std::string out;
  out.reserve(text.size() + 16);
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (c == '\xe2' && i + 2 < text.size() && text[i + 1] == '\x80' &&
               (text[i + 2] == '\xa8' || text[i + 2] == '\xa9')) {
      out += text[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// A claim's value inside an error message. The value may come from anyone
// who can publish a request, before its signature is checked, and the
// message gets logged: quoted, bytes outside printable ASCII (and quotes
// and backslashes) as \xNN, and cut after kQuotedMax bytes.
constexpr size_t kQuotedMax = 64;
std::string Quote(std::string_view value) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (size_t i = 0; i < value.size() && i < kQuotedMax; ++i) {
    auto c = static_cast<unsigned char>(value[i]);
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  out += '"';
  if (value.size() > kQuotedMax) out += "... (" + std::to_string(value.size()) + " bytes)";
  return out;
}

// The registered claims in jwt/v2's field order, each omitted when empty.
ordered_json ClaimsDataJson(const ClaimsData& c) {
  ordered_json j = ordered_json::object();
  if (!c.audience.empty()) j["aud"] = c.audience;
  if (c.expires != 0) j["exp"] = c.expires;
  if (!c.id.empty()) j["jti"] = c.id;
  if (c.issued_at != 0) j["iat"] = c.issued_at;
  if (!c.issuer.empty()) j["iss"] = c.issuer;
  if (!c.name.empty()) j["name"] = c.name;
  if (c.not_before != 0) j["nbf"] = c.not_before;
  if (!c.subject.empty()) j["sub"] = c.subject;
  return j;
}

Result<std::string> Jti(const ClaimsData& claims) {
  ClaimsData c = claims;
  c.id.clear();
  auto text = GoJson(ClaimsDataJson(c), "jti");
  if (!text.ok()) return text.status();
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(text->data(), text->size(), digest, &len, EVP_sha512_256(), nullptr) != 1) {
    return Status::Internal("jti: SHA-512/256 failed");
  }
  return Base32Encode(std::string_view(reinterpret_cast<const char*>(digest), len));
}

// Signs claims (registered claims plus the nats object) with issuer.
Result<std::string> Encode(ClaimsData claims, ordered_json nats, const KeyPair& issuer,
                           std::string_view what) {
  if (claims.subject.empty()) return Status::InvalidArgument(std::string(what) + ": sub is empty");
  claims.issuer = issuer.public_key();
  auto jti = Jti(claims);
  if (!jti.ok()) return jti.status().Annotate(what);
  claims.id = std::move(*jti);
  nats["version"] = kClaimsVersion;
  ordered_json body = ClaimsDataJson(claims);
  body["nats"] = std::move(nats);
  auto text = GoJson(body, what);
  if (!text.ok()) return text.status();
  std::string token(kHeader);
  token += '.';
  token += base64::EncodeUrl(*text);
  auto sig = issuer.Sign(token);
  if (!sig.ok()) return sig.status().Annotate(what);
  token += '.';
  token += base64::EncodeUrl(*sig);
  return token;
}

// "an account public key", "a user public key"
std::string KeyKind(KeyType type) {
  return std::string(type == KeyType::kAccount || type == KeyType::kOperator ? "an " : "a ") +
         std::string(KeyTypeName(type)) + " public key";
}

Status RequireKey(std::string_view key, KeyType type, std::string_view what,
                  std::string_view claim) {
  auto decoded = DecodePublicKey(key, type);
  if (decoded.ok()) return Status::Ok();
  return Status::InvalidArgument(std::string(what) + ": " + std::string(claim) + " must be " +
                                 KeyKind(type) + ": " + decoded.status().message());
}

// jwt/v2's subject rules for permissions: not empty, no leading, trailing
// or doubled dot; a queue name after one space only in sub permissions.
Status CheckSubject(std::string_view s, std::string_view where) {
  auto fail = [&](std::string_view why) {
    return Status::InvalidArgument(std::string(where) + ": subject " + Quote(s) + " " +
                                   std::string(why));
  };
  if (s.empty()) return fail("is empty");
  if (s.find(' ') != std::string_view::npos) return fail("has a space");
  if (s.front() == '.' || s.back() == '.') return fail("starts or ends with a dot");
  if (s.find("..") != std::string_view::npos) return fail("has an empty token (..)");
  return Status::Ok();
}

Status CheckPermission(const Permission& p, std::string_view where, bool queue_allowed) {
  for (const auto* list : {&p.allow, &p.deny}) {
    for (const auto& entry : *list) {
      std::string_view e = entry;
      size_t space = e.find(' ');
      if (space != std::string_view::npos && queue_allowed) {
        SB_RETURN_IF_ERROR(CheckSubject(e.substr(0, space), where));
        SB_RETURN_IF_ERROR(CheckSubject(e.substr(space + 1), where));
      } else {
        SB_RETURN_IF_ERROR(CheckSubject(e, where));
      }
    }
  }
  return Status::Ok();
}

ordered_json PermissionJson(const Permission& p) {
  ordered_json j = ordered_json::object();
  if (!p.allow.empty()) j["allow"] = p.allow;
  if (!p.deny.empty()) j["deny"] = p.deny;
  return j;
}

Status ReadClaimsData(const Reader& r, ClaimsData* c) {
  SB_RETURN_IF_ERROR(r.Str("aud", &c->audience));
  SB_RETURN_IF_ERROR(r.Int("exp", &c->expires));
  SB_RETURN_IF_ERROR(r.Str("jti", &c->id));
  SB_RETURN_IF_ERROR(r.Int("iat", &c->issued_at));
  SB_RETURN_IF_ERROR(r.Str("iss", &c->issuer));
  SB_RETURN_IF_ERROR(r.Str("name", &c->name));
  SB_RETURN_IF_ERROR(r.Int("nbf", &c->not_before));
  SB_RETURN_IF_ERROR(r.Str("sub", &c->subject));
  return Status::Ok();
}

// The checks jwt/v2's Decode makes for every claim type, plus the claim
// type, the issuer's kind and the time window.
Result<Verified> DecodeVerified(std::string_view token, std::string_view type, KeyType issuer_type,
                                int64_t now, std::string_view what) {
  auto fail = [&](std::string why) {
    return Status::InvalidArgument(std::string(what) + ": " + std::move(why));
  };
  if (token.size() > kMaxTokenSize) {
    return Status::ResourceExhausted(std::string(what) + ": token of " +
                                     std::to_string(token.size()) + " bytes, over the 1 MiB limit");
  }
  size_t dot1 = token.find('.');
  size_t dot2 = dot1 == std::string_view::npos ? dot1 : token.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos || token.find('.', dot2 + 1) != std::string_view::npos) {
    return fail("a JWT has three dot-separated parts");
  }
  std::string header_text, body_text, sig;
  if (!base64::DecodeUrl(token.substr(0, dot1), &header_text)) {
    return fail("header is not unpadded base64url");
  }
  json header = json::parse(header_text, nullptr, false);
  if (!header.is_object()) return fail("header is not a JSON object");
  std::string typ, alg;
  Reader hr(&header, "header");
  SB_RETURN_IF_ERROR(hr.Str("typ", &typ).Annotate(what));
  SB_RETURN_IF_ERROR(hr.Str("alg", &alg).Annotate(what));
  if (Upper(typ) != "JWT") return fail("header.typ is " + Quote(typ) + ", want \"JWT\"");
  alg = Lower(alg);
  if (alg != "ed25519-nkey" && alg != "ed25519") {
    return fail("header.alg is " + Quote(alg) + ", want \"ed25519-nkey\"");
  }
  if (!base64::DecodeUrl(token.substr(dot1 + 1, dot2 - dot1 - 1), &body_text)) {
    return fail("claims are not unpadded base64url");
  }
  Verified v;
  v.body = json::parse(body_text, nullptr, false);
  if (!v.body.is_object()) return fail("claims are not a JSON object");
  Reader r(&v.body, "");
  if (v.body.contains("type")) {
    return fail("a version 1 JWT (type at the top level); only nats.version 2 is accepted");
  }
  auto nats = r.Object("nats");
  if (!nats.ok()) return nats.status().Annotate(what);
  if (!*nats) return fail("nats is missing");
  std::string got_type;
  int64_t version = 0;
  Reader nr = r.Sub(*nats, "nats");
  SB_RETURN_IF_ERROR(nr.Str("type", &got_type).Annotate(what));
  SB_RETURN_IF_ERROR(nr.Int("version", &version).Annotate(what));
  if (got_type != type) {
    return fail("nats.type is " + Quote(got_type) + ", want " + Quote(type));
  }
  if (version != kClaimsVersion) {
    return fail("nats.version is " + std::to_string(version) +
                ", want 2 (version 1 signs the claims alone)");
  }
  SB_RETURN_IF_ERROR(ReadClaimsData(r, &v.claims).Annotate(what));
  auto issuer = DecodePublicKey(v.claims.issuer, issuer_type);
  if (!issuer.ok()) {
    return fail("iss must be " + KeyKind(issuer_type) + ": " + issuer.status().message());
  }
  if (!base64::DecodeUrl(token.substr(dot2 + 1), &sig)) {
    return fail("signature is not unpadded base64url");
  }
  Status verified = Verify(v.claims.issuer, token.substr(0, dot2), sig);
  if (!verified.ok()) return verified.Annotate(what);
  if (v.claims.expires > 0 && now > v.claims.expires) {
    return Status::Unauthenticated(std::string(what) + ": expired at " +
                                   std::to_string(v.claims.expires) + ", now " +
                                   std::to_string(now));
  }
  if (v.claims.not_before > 0 && v.claims.not_before > now) {
    return Status::Unauthenticated(std::string(what) + ": not valid before " +
                                   std::to_string(v.claims.not_before) + ", now " +
                                   std::to_string(now));
  }
  return v;
}

Status ReadPermission(const Reader& r, const char* key, Permission* p) {
  auto obj = r.Object(key);
  if (!obj.ok()) return obj.status();
  Reader pr = r.Sub(*obj, key);
  SB_RETURN_IF_ERROR(pr.Strings("allow", &p->allow));
  SB_RETURN_IF_ERROR(pr.Strings("deny", &p->deny));
  return Status::Ok();
}

}  // namespace switchboard::natsauth::internal
