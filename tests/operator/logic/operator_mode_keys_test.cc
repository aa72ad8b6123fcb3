#include "switchboard/operator_logic/operator_mode_keys.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "switchboard/natsauth/jwt.h"
#include "switchboard/natsauth/operator_jwt.h"
#include "switchboard/operator_logic/operator_mode_config.h"

namespace switchboard::operator_logic {
namespace {

namespace k = operator_mode_keys;
using natsauth::KeyPair;
using natsauth::KeyType;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kNow = 1760000000;

std::string AuthSeed() {
  static const std::string seed = KeyPair::Generate(KeyType::kAccount).value().Seed();
  return seed;
}

TEST(PlanOperatorModeSeeds, GeneratesEverythingOnce) {
  auto first = PlanOperatorModeSeeds(std::nullopt, kNow);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(first->changed);
  EXPECT_THAT(first->note, HasSubstr("operator-seed"));
  EXPECT_EQ(first->seeds.issued_at, kNow);
  SecretData stored = EncodeOperatorModeSeeds(first->seeds);
  // The note names keys, never a seed.
  for (const auto& [key, value] : stored) EXPECT_THAT(first->note, Not(HasSubstr(value))) << key;

  auto again = PlanOperatorModeSeeds(stored, kNow + 100);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->changed);
  EXPECT_EQ(again->seeds, first->seeds);
  EXPECT_EQ(DecodeOperatorModeSeeds(stored).value(), first->seeds);
}

TEST(PlanOperatorModeSeeds, FillsOnlyWhatIsMissing) {
  auto first = PlanOperatorModeSeeds(std::nullopt, kNow).value();
  SecretData stored = EncodeOperatorModeSeeds(first.seeds);
  stored.erase(std::string(k::kInstallationSigningSeed));
  stored[std::string(k::kIssuedAt)] = "";
  stored["issuer-seed"] = AuthSeed();  // the callout keys beside it are not its business
  auto plan = PlanOperatorModeSeeds(stored, kNow + 5);
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->changed);
  EXPECT_EQ(plan->note, "generated installation-signing-seed, issued-at");
  EXPECT_EQ(plan->seeds.operator_seed, first.seeds.operator_seed);
  EXPECT_NE(plan->seeds.installation_signing_seed, first.seeds.installation_signing_seed);
  EXPECT_EQ(plan->seeds.issued_at, kNow + 5);
}

TEST(PlanOperatorModeSeeds, AStoredSeedOfTheWrongKindIsNeverReplaced) {
  auto first = PlanOperatorModeSeeds(std::nullopt, kNow).value();
  struct Case {
    std::string_view key;
    std::string value;
    std::string want;
  } cases[] = {
      {k::kOperatorSeed, AuthSeed(), "\"operator-seed\" is not an operator seed (SO...)"},
      {k::kSystemAccountSeed, "SAGARBAGE", "\"system-account-seed\" is not an account seed"},
      {k::kSystemUserSeed, AuthSeed(), "\"system-user-seed\" is not a user seed (SU...)"},
      {k::kAuthorizerUserSeed, first.seeds.operator_seed, "\"authorizer-user-seed\" is not a user"},
      {k::kInstallationSigningSeed, first.seeds.system_user_seed,
       "\"installation-signing-seed\" is not an account seed"},
  };
  for (const auto& c : cases) {
    SecretData stored = EncodeOperatorModeSeeds(first.seeds);
    stored[std::string(c.key)] = c.value;
    auto plan = PlanOperatorModeSeeds(stored, kNow);
    ASSERT_FALSE(plan.ok()) << c.key;
    EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(plan.status().message(), HasSubstr(c.want));
    EXPECT_THAT(plan.status().message(), HasSubstr("restart every NATS server"));
    EXPECT_THAT(plan.status().message(), Not(HasSubstr(c.value)));
    EXPECT_FALSE(DecodeOperatorModeSeeds(stored).ok()) << c.key;
  }
}

TEST(DecodeOperatorModeSeeds, NamesTheMissingKey) {
  auto seeds = PlanOperatorModeSeeds(std::nullopt, kNow).value().seeds;
  for (std::string_view key : {k::kOperatorSeed, k::kSentinelUser, k::kIssuedAt}) {
    SecretData data = EncodeOperatorModeSeeds(seeds);
    data.erase(std::string(key));
    auto decoded = DecodeOperatorModeSeeds(data);
    ASSERT_FALSE(decoded.ok()) << key;
    EXPECT_THAT(decoded.status().message(), HasSubstr("\"" + std::string(key) + "\""));
  }
}

TEST(InstallationAccountKey, SameOnEveryProcessDifferentPerInstallation) {
  auto signing = KeyPair::Generate(KeyType::kAccount).value();
  auto copy = KeyPair::FromSeed(signing.Seed()).value();  // another process, same Secret
  const std::string a = InstallationAccountKey(signing, "team", "a").value().public_key();
  EXPECT_TRUE(natsauth::IsPublicKey(a, KeyType::kAccount));
  EXPECT_EQ(InstallationAccountKey(copy, "team", "a").value().public_key(), a);
  EXPECT_NE(InstallationAccountKey(signing, "team", "b").value().public_key(), a);
  EXPECT_NE(InstallationAccountKey(signing, "other", "a").value().public_key(), a);
  // The separator keeps "a/b" + "c" apart from "a" + "b/c" (names cannot
  // hold '/', but the derivation does not rely on that).
  EXPECT_NE(InstallationAccountKey(signing, "ab", "c").value().public_key(),
            InstallationAccountKey(signing, "a", "bc").value().public_key());
  EXPECT_NE(a, signing.public_key());
}

TEST(InstallationAccountOf, TheStatusShowsTheKeyTheAuthorizerUses) {
  auto seeds = PlanOperatorModeSeeds(std::nullopt, kNow).value().seeds;
  SecretData data = EncodeOperatorModeSeeds(seeds);
  auto signing = KeyPair::FromSeed(seeds.installation_signing_seed).value();
  EXPECT_EQ(InstallationAccountOf(data, "team", "a").value(),
            InstallationAccountKey(signing, "team", "a").value().public_key());
  data.erase(std::string(k::kInstallationSigningSeed));
  EXPECT_EQ(InstallationAccountOf(data, "team", "a").status().code(),
            StatusCode::kFailedPrecondition);
}

TEST(EncodeOperatorModeJwts, SameBytesOnEveryRenderAndAConfigTheRenderAccepts) {
  auto seeds = PlanOperatorModeSeeds(std::nullopt, kNow).value().seeds;
  auto keys = DecodeOperatorModeKeyPairs(seeds, AuthSeed());
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  auto jwts = EncodeOperatorModeJwts(*keys);
  ASSERT_TRUE(jwts.ok()) << jwts.status().ToString();
  auto again = DecodeOperatorModeKeyPairs(seeds, AuthSeed()).value();
  EXPECT_EQ(EncodeOperatorModeJwts(again).value().operator_jwt, jwts->operator_jwt);
  EXPECT_EQ(EncodeOperatorModeJwts(again).value().auth_account_jwt, jwts->auth_account_jwt);
  EXPECT_EQ(keys->Public().auth_account, KeyPair::FromSeed(AuthSeed()).value().public_key());

  OperatorModeConfigInput in;
  in.server_ns = "nats";
  in.server_name = "main";
  in.operator_jwt = jwts->operator_jwt;
  in.system_account_jwt = jwts->system_account_jwt;
  in.auth_account_jwt = jwts->auth_account_jwt;
  in.sentinel_jwt = jwts->sentinel_jwt;
  in.resolver_dir = "/data/resolver";
  in.now = kNow + 1000;
  auto text = RenderOperatorModeConfig(in);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_THAT(*text, Not(HasSubstr(seeds.operator_seed)));

  auto sys_user = natsauth::DecodeUserClaims(SystemUserJwt(*keys, kNow).value(), kNow);
  ASSERT_TRUE(sys_user.ok()) << sys_user.status().ToString();
  EXPECT_EQ(sys_user->claims.issuer, keys->system_account.public_key());
  EXPECT_EQ(sys_user->claims.subject, keys->system_user.public_key());
  auto authorizer = natsauth::DecodeUserClaims(AuthorizerUserJwt(*keys, kNow).value(), kNow);
  ASSERT_TRUE(authorizer.ok());
  EXPECT_EQ(authorizer->claims.issuer, keys->auth_account.public_key());
}

}  // namespace
}  // namespace switchboard::operator_logic
