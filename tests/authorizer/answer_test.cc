// AnswerRequest on a request a real nats-server sent
// (tests/natsauth/testdata/README.md: user inst42, its test password,
// issuer ABJHLOVM... whose seed is nats-server's own test seed), against
// Directories built by hand.
#include "switchboard/authorizer/answer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "switchboard/natsauth/jwt.h"
#include "switchboard/testing/served_server.h"

namespace switchboard::authorizer {
namespace {

namespace logic = operator_logic;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kIssuerSeed[] = "SAANDLKMXL6CUS3CP52WIXBEDN6YJ545GDKC65U5JZPPV6WH6ESWUA6YAI";
constexpr int64_t kIssued = 1796160982;
constexpr char kServer[] = "NAKCGEXDX5YNWSBE4KCLKJ3QYZCKQ7W66BSN4GKS4XC76WLPDKFT5OXX";
constexpr char kUserKey[] = "UDEUESNYAMQESWLSGLM4SM4UBN3ZL4RRD2T5HTVSWGLOQF52MGOFQOKS";
constexpr char kPassword[] = "pw-of-inst42";

std::string CapturedRequest() {
  std::ifstream in(std::string(SWITCHBOARD_TEST_SOURCE_DIR) +
                   "/tests/natsauth/testdata/nats-server-2.15.2-request.jwt");
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

logic::Time At(int64_t unix_seconds) { return logic::Time(std::chrono::seconds(unix_seconds)); }

logic::Directory DirectoryWith(std::string password) {
  logic::CredentialState state;
  state.current = {.username = "inst42", .password = std::move(password), .bcrypt = ""};
  state.rotation_count = 3;
  return switchboard::testing::DirectoryOf(
      {switchboard::testing::DirectoryEntryOf("team-a", "hatchet", "hatchet.team-a", state)});
}

class AnswerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    token_ = CapturedRequest();
    ASSERT_FALSE(token_.empty());
    auto k = natsauth::KeyPair::FromSeed(kIssuerSeed);
    ASSERT_TRUE(k.ok()) << k.status().ToString();
    issuer_ = std::make_unique<natsauth::KeyPair>(std::move(k).value());
  }
  natsauth::AuthorizationResponseClaims Response(const Answer& a) {
    auto r = natsauth::DecodeAuthorizationResponse(a.reply, kIssued + 1);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : natsauth::AuthorizationResponseClaims{};
  }
  std::string token_;
  std::unique_ptr<natsauth::KeyPair> issuer_;
};

TEST_F(AnswerTest, RightPasswordGetsAUserJwtForItsPrefix) {
  Answer a = AnswerRequest(token_, DirectoryWith(kPassword), *issuer_, At(kIssued + 1));
  EXPECT_EQ(a.result, kResultAllowed);
  EXPECT_EQ(a.reason, kReasonAllowed);
  EXPECT_EQ(a.user, "inst42");
  auto response = Response(a);
  EXPECT_EQ(response.claims.subject, kUserKey);  // the request's user key
  EXPECT_EQ(response.claims.audience, kServer);  // the requesting server
  EXPECT_EQ(response.claims.issuer, issuer_->public_key());
  EXPECT_TRUE(response.error.empty()) << response.error;
  auto user = natsauth::DecodeUserClaims(response.jwt, kIssued + 1);
  ASSERT_TRUE(user.ok()) << user.status().ToString();
  EXPECT_EQ(user->claims.audience, "HATCHET");
  EXPECT_EQ(user->claims.subject, kUserKey);
  EXPECT_EQ(user->claims.issuer, issuer_->public_key());
  EXPECT_EQ(user->claims.name, logic::CalloutConnectionName("inst42", 3));
  EXPECT_EQ(user->claims.expires, 0);  // no expiry: the server would disconnect at exp
  EXPECT_EQ(user->pub.allow, logic::SubjectAllowList("hatchet.team-a"));
  EXPECT_EQ(user->sub.allow, logic::SubjectAllowList("hatchet.team-a"));
  EXPECT_THAT(user->pub.allow, ElementsAre("hatchet.team-a.*"));
  EXPECT_EQ(user->subs, natsauth::kNoLimit);
  EXPECT_EQ(user->data, natsauth::kNoLimit);
  EXPECT_EQ(user->payload, natsauth::kNoLimit);
}

// Operator mode: the same decision, but the user JWT names the
// installation's account (issuer_account) and is signed by the installation
// signing key; the response is still signed by the request's issuer (the
// auth account). The chain against real servers: operator_mode_nats_test.
TEST_F(AnswerTest, OperatorModePlacesTheUserInItsInstallationAccount) {
  auto signing = natsauth::KeyPair::Generate(natsauth::KeyType::kAccount).value();
  auto account = natsauth::KeyPair::Generate(natsauth::KeyType::kAccount).value().public_key();
  OperatorModeSigner signer(signing, [&](const logic::AuthorizationDecision& d) {
    return d.ns == "team-a" && d.name == "hatchet" ? account : std::string();
  });
  Answer a = AnswerRequest(token_, DirectoryWith(kPassword), *issuer_, signer, At(kIssued + 1));
  EXPECT_EQ(a.result, kResultAllowed);
  auto response = Response(a);
  EXPECT_EQ(response.claims.issuer, issuer_->public_key());
  auto user = natsauth::DecodeUserClaims(response.jwt, kIssued + 1);
  ASSERT_TRUE(user.ok()) << user.status().ToString();
  EXPECT_EQ(user->claims.issuer, signing.public_key());
  EXPECT_EQ(user->issuer_account, account);
  EXPECT_TRUE(user->claims.audience.empty());  // placement is issuer_account, not aud
  EXPECT_EQ(user->claims.subject, kUserKey);
  EXPECT_EQ(user->claims.name, logic::CalloutConnectionName("inst42", 3));
  EXPECT_THAT(user->pub.allow, ElementsAre("hatchet.team-a.*"));
  EXPECT_THAT(user->sub.allow, ElementsAre("hatchet.team-a.*"));

  // Without an account key the installation is refused at once, by name.
  OperatorModeSigner none(signing, [](const logic::AuthorizationDecision&) { return ""; });
  a = AnswerRequest(token_, DirectoryWith(kPassword), *issuer_, none, At(kIssued + 1));
  EXPECT_EQ(a.result, kResultDenied);
  EXPECT_EQ(a.reason, kReasonSigningFailed);
  EXPECT_THAT(a.message, HasSubstr("installation team-a/hatchet has no NATS account key"));
  EXPECT_THAT(Response(a).error, HasSubstr("team-a/hatchet"));
  // The default: the decision's account, which must then be a key ("HATCHET" is not).
  a = AnswerRequest(token_, DirectoryWith(kPassword), *issuer_, OperatorModeSigner(signing),
                    At(kIssued + 1));
  EXPECT_EQ(a.result, kResultDenied);
}

TEST_F(AnswerTest, DenialsAreAnsweredWithTheirReasonAndNoPassword) {
  struct Case {
    const char* what;
    logic::Directory directory;
    std::string reason;
  };
  logic::Directory unknown = DirectoryWith(kPassword);
  unknown.by_user.clear();
  std::vector<Case> cases = {
      {"wrong password", DirectoryWith("another-password"),
       std::string(logic::DenialReason(logic::Denial::kWrongPassword))},
      {"unknown user", unknown, std::string(logic::DenialReason(logic::Denial::kUnknownUser))},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    Answer a = AnswerRequest(token_, c.directory, *issuer_, At(kIssued + 1));
    EXPECT_EQ(a.result, kResultDenied);
    EXPECT_EQ(a.reason, c.reason);
    auto response = Response(a);
    EXPECT_TRUE(response.jwt.empty());
    EXPECT_FALSE(response.error.empty());
    EXPECT_THAT(response.error, Not(HasSubstr(kPassword)));
    EXPECT_THAT(a.message, Not(HasSubstr(kPassword)));
  }
}

TEST_F(AnswerTest, AnUndecodableRequestGetsNoReply) {
  struct Case {
    const char* what;
    std::string token;
    int64_t now;
    const char* issuer_seed;
  };
  auto other = natsauth::KeyPair::Generate(natsauth::KeyType::kAccount);
  ASSERT_TRUE(other.ok());
  std::vector<Case> cases = {
      {"expired", token_, kIssued + 60, kIssuerSeed},
      {"garbage", "not a token", kIssued + 1, kIssuerSeed},
      {"for another issuer", token_, kIssued + 1, nullptr},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const natsauth::KeyPair& key = c.issuer_seed ? *issuer_ : *other;
    Answer a = AnswerRequest(c.token, DirectoryWith(kPassword), key, At(c.now));
    EXPECT_EQ(a.result, kResultInvalid);
    EXPECT_EQ(a.reason, kReasonInvalidRequest);
    EXPECT_TRUE(a.reply.empty());
    EXPECT_FALSE(a.message.empty());
    EXPECT_THAT(a.message, Not(HasSubstr(kPassword)));
  }
}

}  // namespace
}  // namespace switchboard::authorizer
