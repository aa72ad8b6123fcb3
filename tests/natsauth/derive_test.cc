#include "switchboard/natsauth/derive.h"

#include <gtest/gtest.h>

#include <string>

namespace switchboard::natsauth {
namespace {

constexpr char kParentSeed[] = "SAANDLKMXL6CUS3CP52WIXBEDN6YJ545GDKC65U5JZPPV6WH6ESWUA6YAI";

std::string Hex(const RawKey& raw) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : raw) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

TEST(DeriveKeyPair, SeedIsHmacSha256OfTheParentSeedOverTheLabel) {
  // Expected bytes computed apart from this code: Python's hmac over the
  // raw seed base32-decoded from kParentSeed.
  auto parent = KeyPair::FromSeed(kParentSeed).value();
  const std::string label = std::string("switchboard installation account") + '\0' + "team/a";
  auto child = DeriveKeyPair(parent, KeyType::kAccount, label);
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  auto seed = DecodeSeed(child->Seed()).value();
  EXPECT_EQ(Hex(seed.bytes), "e5c60d54889b20007d9e450e4807063b450a49ed7a9035fd2bc6d3b8ef74753a");
  EXPECT_EQ(seed.type, KeyType::kAccount);
  EXPECT_TRUE(IsPublicKey(child->public_key(), KeyType::kAccount));
}

TEST(DeriveKeyPair, SameInputsSameKeyOtherwiseAnother) {
  auto parent = KeyPair::FromSeed(kParentSeed).value();
  auto other_parent = KeyPair::Generate(KeyType::kAccount).value();
  const std::string a = DeriveKeyPair(parent, KeyType::kAccount, "a").value().public_key();
  EXPECT_EQ(DeriveKeyPair(parent, KeyType::kAccount, "a").value().public_key(), a);
  EXPECT_NE(DeriveKeyPair(parent, KeyType::kAccount, "b").value().public_key(), a);
  EXPECT_NE(DeriveKeyPair(other_parent, KeyType::kAccount, "a").value().public_key(), a);
  EXPECT_NE(a, parent.public_key());
  // The same bytes as a user key: another kind, same raw key.
  auto user = DeriveKeyPair(parent, KeyType::kUser, "a");
  ASSERT_TRUE(user.ok());
  EXPECT_TRUE(IsPublicKey(user->public_key(), KeyType::kUser));
}

TEST(DeriveKeyPair, RefusesKindsThatCannotSign) {
  auto parent = KeyPair::FromSeed(kParentSeed).value();
  EXPECT_EQ(DeriveKeyPair(parent, KeyType::kCurve, "a").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(DeriveKeyPair(parent, KeyType::kSeed, "a").status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace switchboard::natsauth
