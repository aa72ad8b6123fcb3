#include "switchboard/operator_logic/credentials.h"

#include <gtest/gtest.h>

#include <set>

namespace switchboard::operator_logic {
namespace {

TEST(GeneratePassword, Is43UrlSafeCharactersFrom32Bytes) {
  auto pw = GeneratePassword();
  ASSERT_TRUE(pw.ok()) << pw.status().ToString();
  EXPECT_EQ(pw->size(), 43u);  // ceil(32 * 8 / 6), unpadded
  for (char c : *pw) {
    EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') << c;
  }
}

TEST(GeneratePassword, NeverRepeats) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    auto pw = GeneratePassword();
    ASSERT_TRUE(pw.ok());
    EXPECT_TRUE(seen.insert(*pw).second);
  }
}

TEST(Bcrypt, HashVerifiesItsPasswordOnlyAndIsSalted) {
  auto h1 = BcryptHash("correct horse", 4);
  auto h2 = BcryptHash("correct horse", 4);
  ASSERT_TRUE(h1.ok()) << h1.status().ToString();
  ASSERT_TRUE(h2.ok());
  EXPECT_TRUE(IsBcryptHash(*h1));
  EXPECT_EQ(h1->substr(0, 7), "$2b$04$");
  EXPECT_NE(*h1, *h2) << "salt must be random";
  EXPECT_EQ(BcryptVerify("correct horse", *h1).value(), true);
  EXPECT_EQ(BcryptVerify("correct horsf", *h1).value(), false);
  EXPECT_EQ(BcryptVerify("", *h1).value(), false);
}

TEST(Bcrypt, DefaultCostIs11) {
  auto h = BcryptHash("pw");
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->substr(0, 7), "$2b$11$");
  EXPECT_TRUE(BcryptVerify("pw", *h).value());
}

TEST(Bcrypt, RefusesBadInput) {
  struct Case {
    std::string password;
    int cost;
  } cases[] = {
      {"", 4}, {std::string("a\0b", 3), 4}, {std::string(73, 'x'), 4}, {"ok", 3}, {"ok", 32},
  };
  for (const auto& c : cases) {
    auto h = BcryptHash(c.password, c.cost);
    ASSERT_FALSE(h.ok()) << c.password.size() << " " << c.cost;
    EXPECT_EQ(h.status().code(), StatusCode::kInvalidArgument);
  }
  EXPECT_TRUE(BcryptHash(std::string(72, 'x'), 4).ok());
}

TEST(Bcrypt, VerifyRefusesMalformedHash) {
  auto r = BcryptVerify("pw", "plaintext-password");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message().find("plaintext-password"), std::string::npos)
      << "the message must not echo what may be a secret";
}

TEST(IsBcryptHash, Table) {
  const std::string body(53, 'a');
  struct Case {
    std::string hash;
    bool want;
  } cases[] = {
      {"$2b$11$" + body, true},
      {"$2a$10$" + body, true},
      {"$2y$04$" + body, true},
      {"$2x$11$" + body, false},
      {"$2b$11$" + body.substr(1), false},
      {"$2b$11$" + body + "a", false},
      {"$2b$1a$" + body, false},
      {"$2b$11$" + body.substr(1) + "\"", false},
      {"$2b$11$" + body.substr(1) + "\n", false},
      {"", false},
  };
  for (const auto& c : cases) EXPECT_EQ(IsBcryptHash(c.hash), c.want) << c.hash;
}

}  // namespace
}  // namespace switchboard::operator_logic
