// NATS JWTs (nats-io/jwt v2) for the auth callout: the user and
// authorization response claims the authorizer signs, and the authorization
// request claims a NATS server sends it.
//
// A token is base64url(header) "." base64url(claims) "." base64url(sig),
// unpadded; the header is {"typ":"JWT","alg":"ed25519-nkey"} and sig the
// issuer's ed25519 signature of the first two segments. Claims are written in
// jwt/v2's field order with Go's string escaping, so a token signed here is
// byte for byte the one jwt/v2 would sign at the same second.
//
// Time is always passed in (Unix seconds), never read from a clock. Decoding
// errors name the claim at fault, never its value when that may be secret
// (connect_opts carries the client's password).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/common/status.h"
#include "switchboard/natsauth/nkey.h"

namespace switchboard::natsauth {

inline constexpr std::string_view kAuthorizationRequestAudience = "nats-authorization-request";
inline constexpr int64_t kNoLimit = -1;
// jwt/v2 refuses longer tokens.
inline constexpr size_t kMaxTokenSize = 1024 * 1024;

// The registered claims every NATS JWT carries. Zero and empty mean absent.
struct ClaimsData {
  std::string audience;   // aud
  int64_t expires = 0;    // exp; the server disconnects a user at exp
  std::string id;         // jti; computed when encoding
  int64_t issued_at = 0;  // iat
  std::string issuer;     // iss; the signing key's public key when encoding
  std::string name;
  int64_t not_before = 0;  // nbf
  std::string subject;     // sub
};

// jwt/v2's jti: base32 (no padding) of the SHA-512/256 of the registered
// claims' JSON with jti empty. The claims' nats part is not hashed. Empty
// when a claim is not valid UTF-8 (such claims are never encoded).
std::string ComputeJti(const ClaimsData& claims);

struct Permission {
  std::vector<std::string> allow, deny;
};

struct ResponsePermission {
  int64_t max_msgs = 0;
  int64_t ttl_nanos = 0;  // a Go time.Duration
};

// A user JWT. In config-mode auth callout: subject = the request's
// user_nkey, audience = the target account's name, issuer = the account key
// named as auth_callout.issuer. In operator mode the issuer is the target
// account's key or one of its signing keys, and then issuer_account names
// the account (operator_jwt.h).
struct UserClaims {
  ClaimsData claims;
  Permission pub, sub;
  std::optional<ResponsePermission> resp;
  // jwt.NewUserClaims' defaults; the server does not apply them on the
  // callout path, so they stay unlimited.
  int64_t subs = kNoLimit, data = kNoLimit, payload = kNoLimit;
  // A bearer token: the server skips the nonce signature (default_sentinel
  // must be one).
  bool bearer_token = false;
  std::string issuer_account;  // set when signed by one of the account's signing keys
};

// The reply to an authorization request: subject = the request's
// user_nkey, audience = the requesting server's id (server_id.id). Exactly
// one of jwt and error.
struct AuthorizationResponseClaims {
  ClaimsData claims;
  std::string jwt;    // the user JWT
  std::string error;  // logged by the server; the client only sees "Authorization Violation"
  std::string issuer_account;
};

struct ServerId {
  std::string name, host, id, version, cluster;
  std::vector<std::string> tags;
  std::string xkey;
};

struct ClientInfo {
  std::string host;
  uint64_t id = 0;
  std::string user, name;
  std::vector<std::string> tags;
  std::string name_tag, kind, type, mqtt_id, nonce;
};

// The client's CONNECT, as the server saw it. pass and auth_token are
// secrets.
struct ConnectOptions {
  std::string jwt, nkey, sig, auth_token, user, pass, name, lang, version;
  int64_t protocol = 0;
};

struct ClientTls {
  std::string version, cipher;
  std::vector<std::string> certs;
  std::vector<std::vector<std::string>> verified_chains;
};

// What a server sends on $SYS.REQ.USER.AUTH: issuer = the server's key (N),
// subject = the auth_callout issuer's public key, audience
// kAuthorizationRequestAudience, expires = when the server stops waiting.
struct AuthorizationRequestClaims {
  ClaimsData claims;
  ServerId server_id;
  std::string user_nkey;  // made for this connection: the response's subject
  ClientInfo client_info;
  ConnectOptions connect_opts;
  std::optional<ClientTls> client_tls;
  std::string request_nonce;
};

// Sign with an account key. claims.issuer and claims.id are set from the key
// and the claims; iat is taken as given. The subject must be a user key.
Result<std::string> EncodeUserClaims(const UserClaims& user, const KeyPair& issuer);
// The subject must be a user key and the audience a server key.
Result<std::string> EncodeAuthorizationResponse(const AuthorizationResponseClaims& response,
                                                const KeyPair& issuer);

// Each decoder checks what jwt/v2 checks: the header, nats.type and
// nats.version 2, the issuer's kind (an account for users and responses, a
// server for requests), the signature by that issuer, and exp and nbf
// against now; then the claim type's own rules.
Result<UserClaims> DecodeUserClaims(std::string_view token, int64_t now);
Result<AuthorizationResponseClaims> DecodeAuthorizationResponse(std::string_view token,
                                                                int64_t now);
// Also: aud is kAuthorizationRequestAudience, user_nkey is a user key, and,
// when expected_subject is not empty, sub equals it (the callout's issuer
// key the server was configured with).
Result<AuthorizationRequestClaims> DecodeAuthorizationRequest(
    std::string_view token, int64_t now, std::string_view expected_subject = {});

}  // namespace switchboard::natsauth
