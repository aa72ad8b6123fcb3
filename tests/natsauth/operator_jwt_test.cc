// The JWTs of operator mode (operator_jwt.h): what is written, what is read
// back, and every refusal with the claim it names.
#include "switchboard/natsauth/operator_jwt.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "switchboard/common/base64.h"

namespace switchboard::natsauth {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

constexpr int64_t kNow = 1'780'000'000;

KeyPair Key(KeyType type) { return KeyPair::Generate(type).value(); }

// The claims in the order they were written.
nlohmann::ordered_json Body(const std::string& token) {
  size_t a = token.find('.') + 1;
  return nlohmann::ordered_json::parse(
      base64::DecodeUrl(token.substr(a, token.rfind('.') - a)).value());
}

TEST(OperatorJwtTest, OperatorRoundTrip) {
  KeyPair op = Key(KeyType::kOperator);
  KeyPair sys = Key(KeyType::kAccount);
  std::string sk = Key(KeyType::kOperator).public_key();
  OperatorClaims in;
  in.claims = {.issued_at = kNow, .name = "switchboard"};
  in.signing_keys = {sk};
  in.system_account = sys.public_key();
  std::string token = EncodeOperatorClaims(in, op).value();
  nlohmann::ordered_json body = Body(token);
  EXPECT_EQ(body["iss"], op.public_key());
  EXPECT_EQ(body["sub"], op.public_key());
  EXPECT_EQ(body["nats"].dump(), R"({"signing_keys":[")" + sk + R"("],"system_account":")" +
                                     sys.public_key() + R"(","type":"operator","version":2})");
  auto out = DecodeOperatorClaims(token, kNow);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->claims.subject, op.public_key());
  EXPECT_EQ(out->claims.id, ComputeJti(out->claims));
  EXPECT_EQ(out->signing_keys, std::vector<std::string>{sk});
  EXPECT_EQ(out->system_account, sys.public_key());
}

TEST(OperatorJwtTest, AccountRoundTripWritesEveryLimit) {
  KeyPair op = Key(KeyType::kOperator);
  KeyPair acc = Key(KeyType::kAccount);
  std::string a = Key(KeyType::kAccount).public_key(), b = Key(KeyType::kAccount).public_key();
  AccountClaims in;
  in.claims = {.issued_at = kNow, .name = "team-a/hatchet", .subject = acc.public_key()};
  in.limits = {.subs = 100, .payload = 16777216, .conn = 2};
  in.signing_keys = {b, a, b};
  std::string token = EncodeAccountClaims(in, op).value();
  nlohmann::ordered_json nats = Body(token)["nats"];
  // Unlimited is written as -1: an absent conn would read as 0 connections.
  EXPECT_EQ(nats["limits"].dump(), R"({"subs":100,"data":-1,"payload":16777216,"conn":2})");
  EXPECT_EQ(nats["signing_keys"],
            nlohmann::ordered_json(std::vector<std::string>{std::min(a, b), std::max(a, b)}));
  EXPECT_EQ(nats["default_permissions"].dump(), R"({"pub":{},"sub":{}})");
  EXPECT_EQ(nats["authorization"].dump(), "{}");
  EXPECT_EQ(nats["type"], "account");

  auto out = DecodeAccountClaims(token, kNow);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->claims.issuer, op.public_key());
  EXPECT_EQ(out->limits, in.limits);
  EXPECT_EQ(out->signing_keys.size(), 2u);

  AccountClaims defaults;
  defaults.claims.subject = acc.public_key();
  EXPECT_EQ(Body(EncodeAccountClaims(defaults, op).value())["nats"]["limits"].dump(),
            R"({"subs":-1,"data":-1,"payload":-1,"conn":-1})");

  AccountClaims auth;
  auth.claims.subject = acc.public_key();
  std::string user = Key(KeyType::kUser).public_key();
  auth.authorization = {.auth_users = {user}, .allowed_accounts = {"*"}};
  token = EncodeAccountClaims(auth, op).value();
  EXPECT_EQ(Body(token)["nats"]["authorization"].dump(),
            R"({"auth_users":[")" + user + R"("],"allowed_accounts":["*"]})");
  EXPECT_EQ(DecodeAccountClaims(token, kNow).value().authorization, auth.authorization);
}

TEST(OperatorJwtTest, BearerUserRoundTrip) {
  KeyPair acc = Key(KeyType::kAccount);
  UserClaims u;
  u.claims = {.issued_at = kNow, .subject = Key(KeyType::kUser).public_key()};
  u.bearer_token = true;
  u.pub.deny = u.sub.deny = {">"};
  std::string token = EncodeUserClaims(u, acc).value();
  EXPECT_EQ(Body(token)["nats"].dump(),
            R"({"pub":{"deny":[">"]},"sub":{"deny":[">"]},"subs":-1,"data":-1,"payload":-1,)"
            R"("bearer_token":true,"type":"user","version":2})");
  EXPECT_TRUE(DecodeUserClaims(token, kNow).value().bearer_token);
}

TEST(OperatorJwtTest, DeleteRequest) {
  KeyPair op = Key(KeyType::kOperator);
  std::string a = Key(KeyType::kAccount).public_key();
  std::string token = EncodeAccountDeleteRequest({a}, op, kNow).value();
  nlohmann::ordered_json body = Body(token);
  EXPECT_EQ(body["iss"], op.public_key());
  EXPECT_EQ(body["sub"], op.public_key());
  EXPECT_EQ(body["iat"], kNow);
  EXPECT_EQ(body["nats"].dump(), R"({"accounts":[")" + a + R"("],"version":2})");
}

struct Refusal {
  std::string name;
  std::function<Result<std::string>()> encode;
  std::string message;
};

TEST(OperatorJwtTest, Refusals) {
  KeyPair op = Key(KeyType::kOperator);
  KeyPair acc = Key(KeyType::kAccount);
  std::string user = Key(KeyType::kUser).public_key();
  auto account = [&] {
    AccountClaims a;
    a.claims.subject = acc.public_key();
    return a;
  };
  std::vector<Refusal> cases = {
      {"operator signed by an account key", [&] { return EncodeOperatorClaims({}, acc); },
       "operator JWT: the key must be an operator public key"},
      {"operator not self-signed",
       [&] {
         OperatorClaims o;
         o.claims.subject = Key(KeyType::kOperator).public_key();
         return EncodeOperatorClaims(o, op);
       },
       "self-signed"},
      {"operator signing key of the wrong kind",
       [&] {
         OperatorClaims o;
         o.signing_keys = {acc.public_key()};
         return EncodeOperatorClaims(o, op);
       },
       "operator JWT: signing_keys[] must be an operator public key"},
      {"system account of the wrong kind",
       [&] {
         OperatorClaims o;
         o.system_account = user;
         return EncodeOperatorClaims(o, op);
       },
       "operator JWT: system_account must be an account public key"},
      {"account subject a user key",
       [&] {
         AccountClaims a = account();
         a.claims.subject = user;
         return EncodeAccountClaims(a, op);
       },
       "account JWT: sub must be an account public key"},
      {"account signed by an account key", [&] { return EncodeAccountClaims(account(), acc); },
       "account JWT: the issuer must be an operator public key"},
      {"account signing key of the wrong kind",
       [&] {
         AccountClaims a = account();
         a.signing_keys = {op.public_key()};
         return EncodeAccountClaims(a, op);
       },
       "account JWT: signing_keys[] must be an account public key"},
      {"auth user not a user key",
       [&] {
         AccountClaims a = account();
         a.authorization.auth_users = {"switchboard-authorizer"};
         return EncodeAccountClaims(a, op);
       },
       "authorization.auth_users[] must be a user public key"},
      {"allowed accounts without auth users",
       [&] {
         AccountClaims a = account();
         a.authorization.allowed_accounts = {"*"};
         return EncodeAccountClaims(a, op);
       },
       "allowed_accounts needs auth_users"},
      {"* with other accounts",
       [&] {
         AccountClaims a = account();
         a.authorization = {.auth_users = {user}, .allowed_accounts = {"*", acc.public_key()}};
         return EncodeAccountClaims(a, op);
       },
       "\"*\" alone"},
      {"allowed account not an account key",
       [&] {
         AccountClaims a = account();
         a.authorization = {.auth_users = {user}, .allowed_accounts = {"HATCHET"}};
         return EncodeAccountClaims(a, op);
       },
       "authorization.allowed_accounts[] must be an account public key"},
      {"limit below -1",
       [&] {
         AccountClaims a = account();
         a.limits.conn = -2;
         return EncodeAccountClaims(a, op);
       },
       "limits.conn is -2; use -1 for unlimited"},
      {"delete nothing", [&] { return EncodeAccountDeleteRequest({}, op, kNow); },
       "no account to delete"},
      {"delete a user key", [&] { return EncodeAccountDeleteRequest({user}, op, kNow); },
       "accounts[] must be an account public key"},
      {"delete signed by an account", [&] { return EncodeAccountDeleteRequest({user}, acc, kNow); },
       "the key must be an operator public key"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = c.encode();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(), HasSubstr(c.message));
  }
}

TEST(OperatorJwtTest, DecodersRefuseTheWrongTokens) {
  KeyPair op = Key(KeyType::kOperator);
  KeyPair acc = Key(KeyType::kAccount);
  AccountClaims a;
  a.claims.subject = acc.public_key();
  std::string account = EncodeAccountClaims(a, op).value();
  std::string oper = EncodeOperatorClaims({}, op).value();
  EXPECT_THAT(DecodeOperatorClaims(account, kNow).status().message(),
              HasSubstr("nats.type is \"account\", want \"operator\""));
  EXPECT_THAT(DecodeAccountClaims(oper, kNow).status().message(),
              HasSubstr("nats.type is \"operator\", want \"account\""));
  std::string tampered = account;
  tampered[tampered.size() - 2] = tampered[tampered.size() - 2] == 'A' ? 'B' : 'A';
  EXPECT_EQ(DecodeAccountClaims(tampered, kNow).status().code(), StatusCode::kUnauthenticated);
  a.claims.expires = kNow;
  EXPECT_EQ(DecodeAccountClaims(EncodeAccountClaims(a, op).value(), kNow + 1).status().code(),
            StatusCode::kUnauthenticated);
}

}  // namespace
}  // namespace switchboard::natsauth
