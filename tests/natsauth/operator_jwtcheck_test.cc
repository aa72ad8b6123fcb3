// The JWTs of NATS operator mode against the reference implementation:
// jwtcheck decodes our operator, account, bearer user, issuer_account user
// and delete-request tokens with nats-io/jwt v2, runs Validate, checks the
// operator JWT is self-signed, and walks the trust chain (operator ->
// account -> user, signing keys included) as nats-server does.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "jwtcheck_fixture.h"
#include "switchboard/natsauth/jwt.h"
#include "switchboard/natsauth/nkey.h"
#include "switchboard/natsauth/operator_jwt.h"

namespace switchboard::natsauth {
namespace {

using nlohmann::json;

class OperatorJwtcheckTest : public JwtcheckTest {
 protected:
  // Decodes in Go and checks that jwt/v2 reads exactly what we wrote: the
  // same claims, the same text byte for byte, our jti.
  json CheckSame(const std::string& command, const std::string& issuer, const std::string& token) {
    json out = Decode(command, issuer, token);
    std::string ours = Payload(token);
    EXPECT_EQ(out["claims"], json::parse(ours)) << command;
    EXPECT_EQ(out["text"], ours) << command;
    EXPECT_EQ(out["jti"], out["claims"]["jti"]) << command;
    return out;
  }

  KeyPair operator_ = Generate(KeyType::kOperator);
  KeyPair system_ = Generate(KeyType::kAccount);
  KeyPair auth_ = Generate(KeyType::kAccount);
  KeyPair installation_ = Generate(KeyType::kAccount);
  KeyPair signing_ = Generate(KeyType::kAccount);  // the one installation signing key
  KeyPair authorizer_ = Generate(KeyType::kUser);
};

TEST_F(OperatorJwtcheckTest, OperatorJwtIsSelfSignedAndValid) {
  OperatorClaims op;
  op.claims = {.issued_at = now_, .name = "switchboard nats/main"};
  op.system_account = system_.public_key();
  std::string token = EncodeOperatorClaims(op, operator_).value();
  json out = CheckSame("operator", operator_.public_key(), token);
  EXPECT_EQ(out["claims"]["sub"], operator_.public_key());
  EXPECT_EQ(out["claims"]["nats"]["system_account"], system_.public_key());

  op.signing_keys = {Generate(KeyType::kOperator).public_key(),
                     Generate(KeyType::kOperator).public_key()};
  token = EncodeOperatorClaims(op, operator_).value();
  out = CheckSame("operator", operator_.public_key(), token);
  EXPECT_EQ(out["claims"]["nats"]["signing_keys"], json(op.signing_keys));
}

TEST_F(OperatorJwtcheckTest, AccountJwtsDecodeAndValidate) {
  AccountClaims installation;
  installation.claims = {
      .issued_at = now_, .name = "team-a/hatchet", .subject = installation_.public_key()};
  installation.limits = {.subs = 1000, .payload = 16777216, .conn = 5};
  installation.signing_keys = {signing_.public_key()};
  AccountClaims unlimited = installation;
  unlimited.limits = {};
  unlimited.signing_keys.push_back(Generate(KeyType::kAccount).public_key());
  AccountClaims auth;
  auth.claims = {.issued_at = now_, .name = "SWITCHBOARD_AUTH", .subject = auth_.public_key()};
  auth.authorization = {.auth_users = {authorizer_.public_key()}, .allowed_accounts = {"*"}};
  AccountClaims listed = auth;
  listed.authorization.allowed_accounts = {installation_.public_key(), system_.public_key()};
  AccountClaims none;
  none.claims = {.issued_at = now_, .subject = system_.public_key()};
  none.limits.conn = 0;  // no connection at all: omitted, as jwt/v2 omits a zero

  for (const auto& [name, account] : std::vector<std::pair<std::string, AccountClaims>>{
           {"installation", installation},
           {"unlimited, two signing keys", unlimited},
           {"auth, any account", auth},
           {"auth, listed accounts", listed},
           {"conn 0", none}}) {
    SCOPED_TRACE(name);
    auto token = EncodeAccountClaims(account, operator_);
    ASSERT_TRUE(token.ok()) << token.status().ToString();
    json out = CheckSame("account", operator_.public_key(), *token);
    const json& limits = out["claims"]["nats"]["limits"];
    EXPECT_EQ(limits.value("conn", 0), account.limits.conn);
    EXPECT_EQ(limits.value("subs", 0), account.limits.subs);
    EXPECT_EQ(limits.value("payload", 0), account.limits.payload);
    // Off: no leaf nodes, imports, exports or JetStream.
    for (const char* off : {"leaf", "imports", "exports", "mem_storage", "disk_storage"}) {
      EXPECT_FALSE(limits.contains(off)) << off;
    }
  }
  // Signed by another operator than the one expected: refused.
  EXPECT_EQ(Run({"account", Generate(KeyType::kOperator).public_key()},
                EncodeAccountClaims(installation, operator_).value())
                .exit_code,
            1);
}

TEST_F(OperatorJwtcheckTest, SentinelAndCalloutUsersChainToTheOperator) {
  OperatorClaims op;
  op.claims.issued_at = now_;
  op.system_account = system_.public_key();
  AccountClaims sys;
  sys.claims = {.issued_at = now_, .name = "SYS", .subject = system_.public_key()};
  AccountClaims auth;
  auth.claims = {.issued_at = now_, .name = "SWITCHBOARD_AUTH", .subject = auth_.public_key()};
  auth.authorization = {.auth_users = {authorizer_.public_key()}, .allowed_accounts = {"*"}};
  AccountClaims inst;
  inst.claims = {
      .issued_at = now_, .name = "team-a/hatchet", .subject = installation_.public_key()};
  inst.limits.conn = 3;
  inst.signing_keys = {signing_.public_key()};

  // default_sentinel: a bearer user of the auth account that may do nothing.
  UserClaims sentinel;
  sentinel.claims = {.issued_at = now_,
                     .name = "default_sentinel",
                     .subject = Generate(KeyType::kUser).public_key()};
  sentinel.bearer_token = true;
  sentinel.pub.deny = sentinel.sub.deny = {">"};
  std::string sentinel_jwt = EncodeUserClaims(sentinel, auth_).value();
  json out = CheckSame("user", auth_.public_key(), sentinel_jwt);
  EXPECT_EQ(out["claims"]["nats"]["bearer_token"], true);

  // The callout's answer: a user of the installation's account, signed by
  // the installation signing key.
  UserClaims engine;
  engine.claims = {.issued_at = now_,
                   .name = "team-a-hatchet#0",
                   .subject = Generate(KeyType::kUser).public_key()};
  engine.pub.allow = engine.sub.allow = {"hatchet.team-a.*"};
  engine.issuer_account = installation_.public_key();
  std::string engine_jwt = EncodeUserClaims(engine, signing_).value();
  out = CheckSame("user", signing_.public_key(), engine_jwt);
  EXPECT_EQ(out["claims"]["nats"]["issuer_account"], installation_.public_key());

  json chain = {
      {"operator", EncodeOperatorClaims(op, operator_).value()},
      {"accounts",
       {EncodeAccountClaims(sys, operator_).value(), EncodeAccountClaims(auth, operator_).value(),
        EncodeAccountClaims(inst, operator_).value()}},
      {"users", {sentinel_jwt, engine_jwt}}};
  EXPECT_EQ(MustRun({"chain"}, chain.dump()), "ok");

  // A user signed by a key the account does not list is refused.
  KeyPair stranger = Generate(KeyType::kAccount);
  json bad = chain;
  bad["users"] = {EncodeUserClaims(engine, stranger).value()};
  auto r = Run({"chain"}, bad.dump());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, ::testing::HasSubstr("not signed by account"));
  // An account signed by another operator is refused.
  bad = chain;
  bad["accounts"].push_back(EncodeAccountClaims(inst, Generate(KeyType::kOperator)).value());
  r = Run({"chain"}, bad.dump());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, ::testing::HasSubstr("not signed by the operator"));
}

TEST_F(OperatorJwtcheckTest, DeleteRequestReadsAsTheServerReadsIt) {
  std::vector<std::string> accounts = {installation_.public_key(),
                                       Generate(KeyType::kAccount).public_key()};
  std::string token = EncodeAccountDeleteRequest(accounts, operator_, now_).value();
  json out = Decode("delete", operator_.public_key(), token);
  EXPECT_EQ(out["claims"]["nats"]["accounts"], json(accounts));
  EXPECT_EQ(out["claims"]["sub"], operator_.public_key());
  EXPECT_EQ(out["text"], Payload(token));
}

}  // namespace
}  // namespace switchboard::natsauth
