#include "switchboard/natsauth/jwt.h"

#include <nlohmann/json.hpp>
#include <utility>

#include "claims_codec.h"

namespace switchboard::natsauth {

using namespace internal;

std::string ComputeJti(const ClaimsData& claims) {
  auto jti = Jti(claims);
  return jti.ok() ? *jti : std::string();
}

Result<std::string> EncodeUserClaims(const UserClaims& user, const KeyPair& issuer) {
  constexpr std::string_view kWhat = "user JWT";
  SB_RETURN_IF_ERROR(RequireKey(user.claims.subject, KeyType::kUser, kWhat, "sub"));
  SB_RETURN_IF_ERROR(RequireKey(issuer.public_key(), KeyType::kAccount, kWhat, "the issuer"));
  if (!user.issuer_account.empty()) {
    SB_RETURN_IF_ERROR(RequireKey(user.issuer_account, KeyType::kAccount, kWhat, "issuer_account"));
  }
  SB_RETURN_IF_ERROR(CheckPermission(user.pub, "user JWT: pub", false));
  SB_RETURN_IF_ERROR(CheckPermission(user.sub, "user JWT: sub", true));
  ordered_json nats = ordered_json::object();
  nats["pub"] = PermissionJson(user.pub);
  nats["sub"] = PermissionJson(user.sub);
  if (user.resp) nats["resp"] = {{"max", user.resp->max_msgs}, {"ttl", user.resp->ttl_nanos}};
  if (user.subs != 0) nats["subs"] = user.subs;
  if (user.data != 0) nats["data"] = user.data;
  if (user.payload != 0) nats["payload"] = user.payload;
  if (user.bearer_token) nats["bearer_token"] = true;
  if (!user.issuer_account.empty()) nats["issuer_account"] = user.issuer_account;
  nats["type"] = "user";
  return Encode(user.claims, std::move(nats), issuer, kWhat);
}

Result<std::string> EncodeAuthorizationResponse(const AuthorizationResponseClaims& response,
                                                const KeyPair& issuer) {
  constexpr std::string_view kWhat = "authorization response";
  SB_RETURN_IF_ERROR(RequireKey(response.claims.subject, KeyType::kUser, kWhat, "sub"));
  SB_RETURN_IF_ERROR(RequireKey(response.claims.audience, KeyType::kServer, kWhat, "aud"));
  SB_RETURN_IF_ERROR(RequireKey(issuer.public_key(), KeyType::kAccount, kWhat, "the issuer"));
  if (!response.issuer_account.empty()) {
    SB_RETURN_IF_ERROR(
        RequireKey(response.issuer_account, KeyType::kAccount, kWhat, "issuer_account"));
  }
  if (response.jwt.empty() == response.error.empty()) {
    return Status::InvalidArgument(
        "authorization response: exactly one of jwt and error must be set");
  }
  ordered_json nats = ordered_json::object();
  if (!response.jwt.empty()) nats["jwt"] = response.jwt;
  if (!response.error.empty()) nats["error"] = response.error;
  if (!response.issuer_account.empty()) nats["issuer_account"] = response.issuer_account;
  nats["type"] = "authorization_response";
  return Encode(response.claims, std::move(nats), issuer, kWhat);
}

Result<UserClaims> DecodeUserClaims(std::string_view token, int64_t now) {
  constexpr std::string_view kWhat = "user JWT";
  auto v = DecodeVerified(token, "user", KeyType::kAccount, now, kWhat);
  if (!v.ok()) return v.status();
  UserClaims u;
  u.claims = std::move(v->claims);
  // Absent limits decode as 0, as in jwt/v2; kNoLimit is only the builder's default.
  u.subs = u.data = u.payload = 0;
  Reader nr(&v->body["nats"], "nats");
  SB_RETURN_IF_ERROR(ReadPermission(nr, "pub", &u.pub).Annotate(kWhat));
  SB_RETURN_IF_ERROR(ReadPermission(nr, "sub", &u.sub).Annotate(kWhat));
  auto resp = nr.Object("resp");
  if (!resp.ok()) return resp.status().Annotate(kWhat);
  if (*resp) {
    Reader rr = nr.Sub(*resp, "resp");
    u.resp.emplace();
    SB_RETURN_IF_ERROR(rr.Int("max", &u.resp->max_msgs).Annotate(kWhat));
    SB_RETURN_IF_ERROR(rr.Int("ttl", &u.resp->ttl_nanos).Annotate(kWhat));
  }
  SB_RETURN_IF_ERROR(nr.Int("subs", &u.subs).Annotate(kWhat));
  SB_RETURN_IF_ERROR(nr.Int("data", &u.data).Annotate(kWhat));
  SB_RETURN_IF_ERROR(nr.Int("payload", &u.payload).Annotate(kWhat));
  SB_RETURN_IF_ERROR(nr.Bool("bearer_token", &u.bearer_token).Annotate(kWhat));
  SB_RETURN_IF_ERROR(nr.Str("issuer_account", &u.issuer_account).Annotate(kWhat));
  if (!u.issuer_account.empty()) {
    SB_RETURN_IF_ERROR(RequireKey(u.issuer_account, KeyType::kAccount, kWhat, "issuer_account"));
  }
  return u;
}

Result<AuthorizationResponseClaims> DecodeAuthorizationResponse(std::string_view token,
                                                                int64_t now) {
  constexpr std::string_view kWhat = "authorization response";
  auto v = DecodeVerified(token, "authorization_response", KeyType::kAccount, now, kWhat);
  if (!v.ok()) return v.status();
  AuthorizationResponseClaims r;
  r.claims = std::move(v->claims);
  Reader nr(&v->body["nats"], "nats");
  SB_RETURN_IF_ERROR(nr.Str("jwt", &r.jwt).Annotate(kWhat));
  SB_RETURN_IF_ERROR(nr.Str("error", &r.error).Annotate(kWhat));
  SB_RETURN_IF_ERROR(nr.Str("issuer_account", &r.issuer_account).Annotate(kWhat));
  SB_RETURN_IF_ERROR(RequireKey(r.claims.subject, KeyType::kUser, kWhat, "sub"));
  SB_RETURN_IF_ERROR(RequireKey(r.claims.audience, KeyType::kServer, kWhat, "aud"));
  if (r.jwt.empty() == r.error.empty()) {
    return Status::InvalidArgument(
        "authorization response: exactly one of jwt and error must be set");
  }
  return r;
}

Result<AuthorizationRequestClaims> DecodeAuthorizationRequest(std::string_view token, int64_t now,
                                                              std::string_view expected_subject) {
  constexpr std::string_view kWhat = "authorization request";
  auto v = DecodeVerified(token, "authorization_request", KeyType::kServer, now, kWhat);
  if (!v.ok()) return v.status();
  AuthorizationRequestClaims q;
  q.claims = std::move(v->claims);
  if (q.claims.audience != kAuthorizationRequestAudience) {
    return Status::InvalidArgument("authorization request: aud is " + Quote(q.claims.audience) +
                                   ", want " + Quote(kAuthorizationRequestAudience));
  }
  if (!expected_subject.empty() && q.claims.subject != expected_subject) {
    return Status::PermissionDenied("authorization request: sub is " + Quote(q.claims.subject) +
                                    ", not this authorizer's issuer " + Quote(expected_subject));
  }
  const json& nats = v->body["nats"];
  Reader nr(&nats, "nats");

  auto server = nr.Object("server_id");
  if (!server.ok()) return server.status().Annotate(kWhat);
  Reader sr = nr.Sub(*server, "server_id");
  ServerId& s = q.server_id;
  for (auto [key, out] : {std::pair{"name", &s.name},
                          {"host", &s.host},
                          {"id", &s.id},
                          {"version", &s.version},
                          {"cluster", &s.cluster},
                          {"xkey", &s.xkey}}) {
    SB_RETURN_IF_ERROR(sr.Str(key, out).Annotate(kWhat));
  }
  SB_RETURN_IF_ERROR(sr.Strings("tags", &s.tags).Annotate(kWhat));

  SB_RETURN_IF_ERROR(nr.Str("user_nkey", &q.user_nkey).Annotate(kWhat));
  if (q.user_nkey.empty())
    return Status::InvalidArgument("authorization request: user_nkey is missing");
  SB_RETURN_IF_ERROR(RequireKey(q.user_nkey, KeyType::kUser, kWhat, "nats.user_nkey"));

  auto client = nr.Object("client_info");
  if (!client.ok()) return client.status().Annotate(kWhat);
  Reader cr = nr.Sub(*client, "client_info");
  ClientInfo& c = q.client_info;
  SB_RETURN_IF_ERROR(cr.Uint("id", &c.id).Annotate(kWhat));
  SB_RETURN_IF_ERROR(cr.Strings("tags", &c.tags).Annotate(kWhat));
  for (auto [key, out] : {std::pair{"host", &c.host},
                          {"user", &c.user},
                          {"name", &c.name},
                          {"name_tag", &c.name_tag},
                          {"kind", &c.kind},
                          {"type", &c.type},
                          {"mqtt_id", &c.mqtt_id},
                          {"nonce", &c.nonce}}) {
    SB_RETURN_IF_ERROR(cr.Str(key, out).Annotate(kWhat));
  }

  auto connect = nr.Object("connect_opts");
  if (!connect.ok()) return connect.status().Annotate(kWhat);
  Reader opts = nr.Sub(*connect, "connect_opts");
  ConnectOptions& o = q.connect_opts;
  for (auto [key, out] : {std::pair{"jwt", &o.jwt},
                          {"nkey", &o.nkey},
                          {"sig", &o.sig},
                          {"auth_token", &o.auth_token},
                          {"user", &o.user},
                          {"pass", &o.pass},
                          {"name", &o.name},
                          {"lang", &o.lang},
                          {"version", &o.version}}) {
    SB_RETURN_IF_ERROR(opts.Str(key, out).Annotate(kWhat));
  }
  SB_RETURN_IF_ERROR(opts.Int("protocol", &o.protocol).Annotate(kWhat));

  auto tls = nr.Object("client_tls");
  if (!tls.ok()) return tls.status().Annotate(kWhat);
  if (*tls) {
    Reader tr = nr.Sub(*tls, "client_tls");
    ClientTls& t = q.client_tls.emplace();
    SB_RETURN_IF_ERROR(tr.Str("version", &t.version).Annotate(kWhat));
    SB_RETURN_IF_ERROR(tr.Str("cipher", &t.cipher).Annotate(kWhat));
    SB_RETURN_IF_ERROR(tr.Strings("certs", &t.certs).Annotate(kWhat));
    auto it = (*tls)->find("verified_chains");
    if (it != (*tls)->end() && !it->is_null()) {
      if (!it->is_array()) {
        return Status::InvalidArgument(
            "authorization request: nats.client_tls.verified_chains: want a list of lists");
      }
      for (const auto& chain : *it) {
        SB_RETURN_IF_ERROR(Reader::StringsOf(chain, "nats.client_tls.verified_chains[]",
                                             &t.verified_chains.emplace_back())
                               .Annotate(kWhat));
      }
    }
  }
  SB_RETURN_IF_ERROR(nr.Str("request_nonce", &q.request_nonce).Annotate(kWhat));
  return q;
}

}  // namespace switchboard::natsauth
