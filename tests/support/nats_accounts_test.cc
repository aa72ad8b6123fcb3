#include "switchboard/testing/nats_accounts.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "switchboard/common/base64.h"
#include "switchboard/testing/temp_dir.h"

namespace switchboard::e2e {
namespace {

TEST(NatsAccounts, RecognisesEachStaticConfig) {
  EXPECT_TRUE(IsCalloutConfig("authorization { auth_callout { issuer: A } }"));
  EXPECT_FALSE(IsCalloutConfig("include \"switchboard.conf\""));
  EXPECT_TRUE(IsOperatorModeConfig("default_sentinel: \"eyJ...\""));
  EXPECT_FALSE(IsOperatorModeConfig("authorization { auth_callout { issuer: A } }"));
}

TEST(NatsAccounts, EachServerGetsItsOwnStore) {
  const std::string body = "resolver {\n  type: full\n  dir: \"/r/resolver\"\n}\n";
  auto bodies = BodiesWithStores(body, "/r/resolver", 3);
  ASSERT_EQ(bodies.size(), 3u);
  for (int i = 0; i < 3; i++) {
    EXPECT_EQ(StoreDir("/r/resolver", i), "/r/resolver-" + std::to_string(i));
    EXPECT_NE(bodies[i].find("dir: \"/r/resolver-" + std::to_string(i) + "\""), std::string::npos)
        << bodies[i];
  }
  // Only the quoted directory is replaced; a body naming none is kept.
  EXPECT_EQ(BodiesWithStores("dir: \"/r/resolver-x\"", "/r/resolver", 2),
            (std::vector<std::string>{"dir: \"/r/resolver-x\"", "dir: \"/r/resolver-x\""}));
}

std::string Jwt(const std::string& payload) {
  return base64::EncodeUrl(R"({"typ":"JWT","alg":"ed25519-nkey"})") + "." +
         base64::EncodeUrl(payload) + ".c2ln";
}

TEST(NatsAccounts, ClaimsOfIgnoresWhatEverySigningChanges) {
  const std::string a = Jwt(R"({"iat":1,"jti":"X","sub":"AAA","nats":{"limits":{"conn":5}}})");
  const std::string resigned =
      Jwt(R"({"iat":2,"jti":"Y","sub":"AAA","nats":{"limits":{"conn":5}}})");
  const std::string other = Jwt(R"({"iat":1,"jti":"X","sub":"AAA","nats":{"limits":{"conn":6}}})");
  EXPECT_FALSE(ClaimsOf(a).empty());
  EXPECT_EQ(ClaimsOf(a), ClaimsOf(resigned));
  EXPECT_NE(ClaimsOf(a), ClaimsOf(other));
  for (const std::string& bad :
       std::vector<std::string>{"", "a.b", "a.!!.c", Jwt("not json"), Jwt("[1]")}) {
    EXPECT_EQ(ClaimsOf(bad), "") << bad;
  }
}

TEST(NatsAccounts, StoredJwtsReadsADirectoryOfAccountFiles) {
  testing::TempDir dir;
  const std::string store = dir.path() + "/store";
  EXPECT_TRUE(StoredJwts(store).empty());  // no directory yet
  std::filesystem::create_directories(store);
  std::ofstream(store + "/AAA.jwt") << "jwt-a";
  std::ofstream(store + "/ABB.jwt") << "jwt-b";
  std::ofstream(store + "/notes.txt") << "not an account";
  EXPECT_EQ(StoredJwts(store),
            (std::map<std::string, std::string>{{"AAA", "jwt-a"}, {"ABB", "jwt-b"}}));
  EXPECT_TRUE(StoreHolds(store, "AAA"));
  EXPECT_FALSE(StoreHolds(store, "ACC"));
}

}  // namespace
}  // namespace switchboard::e2e
