// The shared machinery of natsauth's claim codecs (user, authorization,
// operator and account JWTs): Go's JSON text, the registered claims, signing
// and the checks jwt/v2's decoder makes for every claim type. Private to
// natsauth.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "switchboard/common/status.h"
#include "switchboard/natsauth/jwt.h"
#include "switchboard/natsauth/nkey.h"

namespace switchboard::natsauth::internal {

using nlohmann::json;
using nlohmann::ordered_json;

inline constexpr int kClaimsVersion = 2;

// JSON text as Go's json.Marshal writes it (HTML and U+2028/9 escapes);
// kInvalidArgument when a string is not valid UTF-8.
Result<std::string> GoJson(const ordered_json& value, std::string_view what);
// A claim's value inside an error message: quoted, escaped, cut after 64 bytes.
std::string Quote(std::string_view value);
// The registered claims in jwt/v2's field order, each omitted when empty.
ordered_json ClaimsDataJson(const ClaimsData& c);
// jwt/v2's jti of the claims.
Result<std::string> Jti(const ClaimsData& claims);
// Signs claims (registered claims plus the nats object, to which
// "version": 2 is appended) with issuer; iss and jti are set here.
Result<std::string> Encode(ClaimsData claims, ordered_json nats, const KeyPair& issuer,
                           std::string_view what);
// "an account public key", "a user public key"
std::string KeyKind(KeyType type);
// OK when key is a public key of that kind; else kInvalidArgument
// "<what>: <claim> must be <kind>: <why>".
Status RequireKey(std::string_view key, KeyType type, std::string_view what,
                  std::string_view claim);
// jwt/v2's subject rules for permissions.
Status CheckSubject(std::string_view s, std::string_view where);
Status CheckPermission(const Permission& p, std::string_view where, bool queue_allowed);
ordered_json PermissionJson(const Permission& p);

// Reads typed members of one JSON object as Go's json.Unmarshal would into
// a struct: absent or null leaves the zero value, a value of another type
// is an error. Messages name the member, never its value.
class Reader {
 public:
  Reader(const json* obj, std::string path) : obj_(obj), path_(std::move(path)) {}

  Status Str(const char* key, std::string* out) const {
    const json* v = Find(key);
    if (!v) return Status::Ok();
    if (!v->is_string()) return Wrong(key, "a string");
    *out = v->get<std::string>();
    return Status::Ok();
  }
  Status Int(const char* key, int64_t* out) const {
    const json* v = Find(key);
    if (!v) return Status::Ok();
    if (v->is_number_unsigned()) {
      if (v->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return Wrong(key, "a 64-bit integer");
      }
      *out = static_cast<int64_t>(v->get<uint64_t>());
      return Status::Ok();
    }
    if (!v->is_number_integer()) return Wrong(key, "an integer");
    *out = v->get<int64_t>();
    return Status::Ok();
  }
  Status Bool(const char* key, bool* out) const {
    const json* v = Find(key);
    if (!v) return Status::Ok();
    if (!v->is_boolean()) return Wrong(key, "a boolean");
    *out = v->get<bool>();
    return Status::Ok();
  }
  Status Uint(const char* key, uint64_t* out) const {
    const json* v = Find(key);
    if (!v) return Status::Ok();
    if (!v->is_number_unsigned()) return Wrong(key, "an unsigned integer");
    *out = v->get<uint64_t>();
    return Status::Ok();
  }
  Status Strings(const char* key, std::vector<std::string>* out) const {
    const json* v = Find(key);
    if (!v) return Status::Ok();
    return StringsOf(*v, Path(key), out);
  }
  static Status StringsOf(const json& v, const std::string& path, std::vector<std::string>* out) {
    auto wrong = [&] { return Status::InvalidArgument(path + ": want a list of strings"); };
    if (!v.is_array()) return wrong();
    out->clear();
    for (const auto& e : v) {
      if (!e.is_string()) return wrong();
      out->push_back(e.get<std::string>());
    }
    return Status::Ok();
  }
  // A nested object: nullptr when absent or null.
  Result<const json*> Object(const char* key) const {
    const json* v = Find(key);
    if (!v) return static_cast<const json*>(nullptr);
    if (!v->is_object()) return Wrong(key, "an object");
    return v;
  }
  Reader Sub(const json* obj, const char* key) const { return Reader(obj, Path(key)); }
  std::string Path(const char* key) const { return path_.empty() ? key : path_ + "." + key; }

 private:
  const json* Find(const char* key) const {
    if (!obj_) return nullptr;
    auto it = obj_->find(key);
    if (it == obj_->end() || it->is_null()) return nullptr;
    return &*it;
  }
  Status Wrong(const char* key, std::string_view want) const {
    return Status::InvalidArgument(Path(key) + ": want " + std::string(want));
  }

  const json* obj_;
  std::string path_;
};

Status ReadClaimsData(const Reader& r, ClaimsData* c);
Status ReadPermission(const Reader& r, const char* key, Permission* p);

struct Verified {
  json body;
  ClaimsData claims;
};

// The checks jwt/v2's Decode makes for every claim type, plus the claim
// type (nats.type), the issuer's kind and the time window.
Result<Verified> DecodeVerified(std::string_view token, std::string_view type, KeyType issuer_type,
                                int64_t now, std::string_view what);

}  // namespace switchboard::natsauth::internal
