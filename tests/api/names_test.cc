#include "switchboard/api/names.h"

#include <gtest/gtest.h>

namespace switchboard::api {
namespace {

TEST(Names, DnsSubdomain) {
  for (std::string ok : {std::string("a"), std::string("hatchet"), std::string("a-b.c-d"),
                         std::string("0abc"), std::string(253, 'a')}) {
    EXPECT_EQ(CheckDnsSubdomain(ok), "") << ok;
  }
  EXPECT_NE(CheckDnsSubdomain(""), "");
  EXPECT_NE(CheckDnsSubdomain(std::string(254, 'a')).find("253"), std::string::npos);
  EXPECT_NE(CheckDnsSubdomain("Abc").find("lowercase"), std::string::npos);
  EXPECT_NE(CheckDnsSubdomain("a..b"), "");
  EXPECT_NE(CheckDnsSubdomain("-a"), "");
  EXPECT_NE(CheckDnsSubdomain("a-"), "");
  EXPECT_NE(CheckDnsSubdomain("a_b").find("'_'"), std::string::npos);
}

TEST(Names, DnsLabel) {
  EXPECT_EQ(CheckDnsLabel("team-a"), "");
  EXPECT_NE(CheckDnsLabel("a.b"), "");
  EXPECT_NE(CheckDnsLabel(std::string(64, 'a')).find("63"), std::string::npos);
}

TEST(Names, SecretKey) {
  EXPECT_EQ(CheckSecretKey("ca.crt"), "");
  EXPECT_EQ(CheckSecretKey("SERVER_URL-1"), "");
  EXPECT_NE(CheckSecretKey("."), "");
  EXPECT_NE(CheckSecretKey("..x"), "");
  EXPECT_NE(CheckSecretKey("a/b"), "");
  EXPECT_NE(CheckSecretKey(""), "");
}

TEST(Names, Derived) {
  EXPECT_EQ(DefaultEnvSecretName("hatchet"), "hatchet-pubsub-env");
  EXPECT_EQ(DefaultCredentialsSecretName("hatchet"), "hatchet-nats-credentials");
  EXPECT_EQ(DefaultUsername("team-a", "hatchet"), "team-a-hatchet");
  EXPECT_EQ(DefaultConfigSecretName("shared"), "shared-switchboard");
  EXPECT_EQ(QualifiedName("ns", "n"), "ns/n");
  EXPECT_EQ(QualifiedName("", "n"), "n");
}

}  // namespace
}  // namespace switchboard::api
