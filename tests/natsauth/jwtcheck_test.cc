// natsauth against the reference implementation: jwtcheck runs
// github.com/nats-io/jwt/v2 and github.com/nats-io/nkeys (what nats-server
// itself uses) on our keys, signatures and tokens, and makes tokens for our
// decoders. Built into the tools cache by scripts/build-tools.sh; a missing
// tool is a failure, not a skip.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <ctime>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "jwtcheck_fixture.h"
#include "switchboard/common/base64.h"
#include "switchboard/natsauth/jwt.h"
#include "switchboard/natsauth/nkey.h"
#include "switchboard/testing/process.h"

namespace switchboard::natsauth {
namespace {

using nlohmann::json;
using testing::RunResult;

TEST_F(JwtcheckTest, PublicKeysOfOurSeeds) {
  for (KeyType type : {KeyType::kAccount, KeyType::kUser, KeyType::kServer, KeyType::kOperator,
                       KeyType::kCluster, KeyType::kCurve}) {
    for (int i = 0; i < 3; ++i) {
      KeyPair pair = Generate(type);
      EXPECT_EQ(MustRun({"pubkey"}, pair.Seed()), pair.public_key()) << KeyTypeName(type);
    }
  }
}

TEST_F(JwtcheckTest, SignaturesBothWays) {
  std::string binary;
  for (int i = 0; i < 256; ++i) binary.push_back(static_cast<char>(i));
  for (KeyType type : {KeyType::kAccount, KeyType::kUser, KeyType::kServer, KeyType::kOperator}) {
    KeyPair pair = Generate(type);
    for (const std::string& message :
         {std::string(), std::string("hello"), binary, std::string(10000, 'x')}) {
      SCOPED_TRACE(std::string(KeyTypeName(type)) + ", " + std::to_string(message.size()) +
                   " bytes");
      auto ours = pair.Sign(message);
      ASSERT_TRUE(ours.ok());
      json verify = {{"message", base64::EncodeUrl(message)},
                     {"signature", base64::EncodeUrl(*ours)}};
      EXPECT_EQ(MustRun({"verify", pair.public_key()}, verify.dump()), "ok");
      verify["message"] = base64::EncodeUrl(message + "!");
      EXPECT_EQ(Run({"verify", pair.public_key()}, verify.dump()).exit_code, 1);

      json sign = {{"seed", pair.Seed()}, {"message", base64::EncodeUrl(message)}};
      auto theirs = base64::DecodeUrl(MustRun({"sign"}, sign.dump()));
      ASSERT_TRUE(theirs.has_value());
      EXPECT_TRUE(Verify(pair.public_key(), message, *theirs).ok());
      EXPECT_EQ(*theirs, *ours);  // ed25519 is deterministic
    }
  }
}

// Every claim we sign, as jwt/v2 decodes and validates it: the claims it
// reads are exactly the ones written, its marshalled text is ours byte for
// byte, and its jti rule gives our jti.
TEST_F(JwtcheckTest, OurUserJwtsDecodeInJwtV2) {
  KeyPair issuer = Generate(KeyType::kAccount);
  KeyPair signing_account = Generate(KeyType::kAccount);
  auto user = [&] {
    UserClaims u;
    u.claims.subject = Generate(KeyType::kUser).public_key();
    u.claims.audience = "HATCHET";
    u.claims.name = "inst42";
    u.claims.issued_at = now_;
    u.pub.allow = {"hatchet.team-a.>"};
    u.sub.allow = {"hatchet.team-a.>"};
    return u;
  };
  std::vector<std::pair<std::string, UserClaims>> cases;
  cases.emplace_back("basic", user());
  UserClaims full = user();
  full.claims.expires = now_ + 3600;
  full.pub.deny = {"hatchet.team-a.secret", "x.*.y"};
  full.sub.allow.push_back("_INBOX.> q1");
  full.sub.deny = {"a.b"};
  full.resp = ResponsePermission{1, 5000000000};
  full.subs = 10;
  full.data = 0;
  full.payload = 16777216;
  full.issuer_account = signing_account.public_key();
  cases.emplace_back("every field", full);
  UserClaims bare;
  bare.claims.subject = Generate(KeyType::kUser).public_key();
  bare.claims.issued_at = now_;
  cases.emplace_back("no permissions, no audience", bare);
  UserClaims escaped = user();
  escaped.claims.name = "a<b>&c\"d\\e\n\x01\x1f\xe2\x80\xa8\xe2\x80\xa9 \xc3\xa9\t\b\f";
  escaped.claims.audience = "T&C";
  cases.emplace_back("Go's escaping", escaped);

  for (const auto& [name, u] : cases) {
    SCOPED_TRACE(name);
    auto token = EncodeUserClaims(u, issuer);
    ASSERT_TRUE(token.ok()) << token.status().ToString();
    json out = Decode("user", issuer.public_key(), *token);
    std::string ours = Payload(*token);
    EXPECT_EQ(out["claims"], json::parse(ours));
    EXPECT_EQ(out["text"], ours);
    EXPECT_EQ(out["jti"], out["claims"]["jti"]);
    EXPECT_EQ(out["claims"]["iss"], issuer.public_key());
  }

  // Tampered claims are refused by jwt/v2 too.
  auto token = EncodeUserClaims(user(), issuer);
  ASSERT_TRUE(token.ok());
  UserClaims other = user();
  other.pub.allow = {">"};
  auto forged = EncodeUserClaims(other, issuer);
  ASSERT_TRUE(forged.ok());
  std::string spliced = token->substr(0, token->find('.')) +
                        forged->substr(forged->find('.'), forged->rfind('.') - forged->find('.')) +
                        token->substr(token->rfind('.'));
  RunResult r = Run({"user", issuer.public_key()}, spliced);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, ::testing::HasSubstr("signature verification"));
  // And a token from another issuer than the expected one.
  EXPECT_EQ(Run({"user", signing_account.public_key()}, *token).exit_code, 1);
}

TEST_F(JwtcheckTest, OurAuthorizationResponsesDecodeInJwtV2) {
  KeyPair issuer = Generate(KeyType::kAccount);
  KeyPair server = Generate(KeyType::kServer);
  UserClaims u;
  u.claims.subject = Generate(KeyType::kUser).public_key();
  u.claims.audience = "HATCHET";
  u.claims.issued_at = now_;
  auto user_jwt = EncodeUserClaims(u, issuer);
  ASSERT_TRUE(user_jwt.ok());

  AuthorizationResponseClaims ok;
  ok.claims.subject = u.claims.subject;
  ok.claims.audience = server.public_key();
  ok.claims.issued_at = now_;
  ok.jwt = *user_jwt;
  AuthorizationResponseClaims denied = ok;
  denied.jwt.clear();
  denied.error = "unknown user <inst9>";
  denied.issuer_account = Generate(KeyType::kAccount).public_key();
  for (const auto& [name, response] :
       {std::pair<std::string, AuthorizationResponseClaims>{"jwt", ok}, {"error", denied}}) {
    SCOPED_TRACE(name);
    auto token = EncodeAuthorizationResponse(response, issuer);
    ASSERT_TRUE(token.ok()) << token.status().ToString();
    json out = Decode("response", issuer.public_key(), *token);
    std::string ours = Payload(*token);
    EXPECT_EQ(out["claims"], json::parse(ours));
    EXPECT_EQ(out["text"], ours);
    EXPECT_EQ(out["jti"], out["claims"]["jti"]);
  }
  // The embedded user JWT is one jwt/v2 accepts on its own.
  json out = Decode("user", issuer.public_key(), *user_jwt);
  EXPECT_EQ(out["claims"]["sub"], u.claims.subject);
}

// The other way: jwt/v2 signs, we decode, and re-signing what we decoded
// gives jwt/v2's token byte for byte.
TEST_F(JwtcheckTest, JwtV2UserJwtsDecodeHere) {
  KeyPair issuer = Generate(KeyType::kAccount);
  std::string subject = Generate(KeyType::kUser).public_key();
  std::string signing_account = Generate(KeyType::kAccount).public_key();
  json claims = {
      {"sub", subject},
      {"aud", "HATCHET"},
      {"name", "inst7 <team & co>"},
      {"exp", now_ + 600},
      {"nats",
       {{"pub", {{"allow", {"a.>", "b.*"}}, {"deny", {"a.b"}}}},
        {"sub", {{"allow", {"a.>", "_INBOX.> q"}}}},
        {"resp", {{"max", 1}, {"ttl", 1000000000}}},
        {"issuer_account", signing_account}}},
  };
  std::string token =
      MustRun({"encode-user"}, json{{"seed", issuer.Seed()}, {"claims", claims}}.dump());
  auto u = DecodeUserClaims(token, now_);
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->claims.issuer, issuer.public_key());
  EXPECT_EQ(u->claims.subject, subject);
  EXPECT_EQ(u->claims.audience, "HATCHET");
  EXPECT_EQ(u->claims.name, "inst7 <team & co>");
  EXPECT_EQ(u->claims.expires, now_ + 600);
  EXPECT_GE(u->claims.issued_at, now_ - 5);
  EXPECT_LE(u->claims.issued_at, now_ + 600);
  EXPECT_EQ(u->claims.id, ComputeJti(u->claims));
  EXPECT_EQ(u->pub.allow, (std::vector<std::string>{"a.>", "b.*"}));
  EXPECT_EQ(u->pub.deny, std::vector<std::string>{"a.b"});
  EXPECT_EQ(u->sub.allow, (std::vector<std::string>{"a.>", "_INBOX.> q"}));
  EXPECT_TRUE(u->sub.deny.empty());
  ASSERT_TRUE(u->resp.has_value());
  EXPECT_EQ(u->resp->max_msgs, 1);
  EXPECT_EQ(u->resp->ttl_nanos, 1000000000);
  // jwt.NewUserClaims' defaults.
  EXPECT_EQ(u->subs, kNoLimit);
  EXPECT_EQ(u->data, kNoLimit);
  EXPECT_EQ(u->payload, kNoLimit);
  EXPECT_EQ(u->issuer_account, signing_account);

  auto again = EncodeUserClaims(*u, issuer);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, token);

  std::string tampered = token;
  tampered[tampered.size() - 3] = tampered[tampered.size() - 3] == 'A' ? 'B' : 'A';
  EXPECT_EQ(DecodeUserClaims(tampered, now_).status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(DecodeUserClaims(token, now_ + 601).status().code(), StatusCode::kUnauthenticated);
}

// A request encoded by jwt/v2, the encoder nats-server uses for
// $SYS.REQ.USER.AUTH, with every field the server fills in.
TEST_F(JwtcheckTest, JwtV2AuthorizationRequestsDecodeHere) {
  KeyPair server = Generate(KeyType::kServer);
  KeyPair issuer = Generate(KeyType::kAccount);
  std::string user_nkey = Generate(KeyType::kUser).public_key();
  json claims = {
      {"sub", issuer.public_key()},
      {"aud", "nats-authorization-request"},
      {"exp", now_ + 2},
      {"nats",
       {{"server_id",
         {{"name", "nats-1"},
          {"host", "10.0.0.1"},
          {"id", server.public_key()},
          {"version", "2.15.2"},
          {"cluster", "switchboard"},
          {"tags", {"az:b"}},
          {"xkey", "XAB3NANV3M6N7AHSQP2U5FRWKKUT7EG2ZXXABV4XVXYQRJGM4S2CZGHT"}}},
        {"user_nkey", user_nkey},
        {"client_info",
         {{"host", "10.0.0.9"},
          {"id", 42},
          {"user", "inst42"},
          {"name", "hatchet-engine"},
          {"tags", {"t1"}},
          {"name_tag", "nt"},
          {"kind", "Client"},
          {"type", "nats"},
          {"mqtt_id", "m1"},
          {"nonce", "abc"}}},
        {"connect_opts",
         {{"jwt", "j"},
          {"nkey", "nk"},
          {"sig", "sg"},
          {"auth_token", "tok"},
          {"user", "inst42"},
          {"pass", "pw-of-inst42"},
          {"name", "hatchet-engine"},
          {"lang", "go"},
          {"version", "1.55.0"},
          {"protocol", 1}}},
        {"client_tls",
         {{"version", "1.3"},
          {"cipher", "TLS_AES_256_GCM_SHA384"},
          {"certs", {"C1", "C2"}},
          {"verified_chains", json::array({json::array({"C1", "CA"})})}}},
        {"request_nonce", "rn1"}}},
  };
  std::string token =
      MustRun({"encode-request"}, json{{"seed", server.Seed()}, {"claims", claims}}.dump());
  auto r = DecodeAuthorizationRequest(token, now_, issuer.public_key());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->claims.issuer, server.public_key());
  EXPECT_EQ(r->claims.subject, issuer.public_key());
  EXPECT_EQ(r->claims.expires, now_ + 2);
  EXPECT_EQ(r->claims.id, ComputeJti(r->claims));
  EXPECT_EQ(r->server_id.name, "nats-1");
  EXPECT_EQ(r->server_id.host, "10.0.0.1");
  EXPECT_EQ(r->server_id.id, server.public_key());
  EXPECT_EQ(r->server_id.version, "2.15.2");
  EXPECT_EQ(r->server_id.cluster, "switchboard");
  EXPECT_EQ(r->server_id.tags, std::vector<std::string>{"az:b"});
  EXPECT_EQ(r->server_id.xkey, "XAB3NANV3M6N7AHSQP2U5FRWKKUT7EG2ZXXABV4XVXYQRJGM4S2CZGHT");
  EXPECT_EQ(r->user_nkey, user_nkey);
  EXPECT_EQ(r->client_info.host, "10.0.0.9");
  EXPECT_EQ(r->client_info.id, 42u);
  EXPECT_EQ(r->client_info.user, "inst42");
  EXPECT_EQ(r->client_info.name, "hatchet-engine");
  EXPECT_EQ(r->client_info.tags, std::vector<std::string>{"t1"});
  EXPECT_EQ(r->client_info.name_tag, "nt");
  EXPECT_EQ(r->client_info.kind, "Client");
  EXPECT_EQ(r->client_info.type, "nats");
  EXPECT_EQ(r->client_info.mqtt_id, "m1");
  EXPECT_EQ(r->client_info.nonce, "abc");
  EXPECT_EQ(r->connect_opts.jwt, "j");
  EXPECT_EQ(r->connect_opts.nkey, "nk");
  EXPECT_EQ(r->connect_opts.sig, "sg");
  EXPECT_EQ(r->connect_opts.auth_token, "tok");
  EXPECT_EQ(r->connect_opts.user, "inst42");
  EXPECT_EQ(r->connect_opts.pass, "pw-of-inst42");
  EXPECT_EQ(r->connect_opts.name, "hatchet-engine");
  EXPECT_EQ(r->connect_opts.lang, "go");
  EXPECT_EQ(r->connect_opts.version, "1.55.0");
  EXPECT_EQ(r->connect_opts.protocol, 1);
  ASSERT_TRUE(r->client_tls.has_value());
  EXPECT_EQ(r->client_tls->version, "1.3");
  EXPECT_EQ(r->client_tls->cipher, "TLS_AES_256_GCM_SHA384");
  EXPECT_EQ(r->client_tls->certs, (std::vector<std::string>{"C1", "C2"}));
  ASSERT_EQ(r->client_tls->verified_chains.size(), 1u);
  EXPECT_EQ(r->client_tls->verified_chains[0], (std::vector<std::string>{"C1", "CA"}));
  EXPECT_EQ(r->request_nonce, "rn1");

  // jwt/v2 takes it too, and our reading matches its own.
  json out = Decode("request", server.public_key(), token);
  EXPECT_EQ(out["claims"]["nats"]["connect_opts"]["user"], "inst42");
  EXPECT_EQ(out["jti"], r->claims.id);

  EXPECT_EQ(DecodeAuthorizationRequest(token, now_ + 3).status().code(),
            StatusCode::kUnauthenticated);
  EXPECT_EQ(DecodeAuthorizationRequest(token, now_, Generate(KeyType::kAccount).public_key())
                .status()
                .code(),
            StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace switchboard::natsauth
