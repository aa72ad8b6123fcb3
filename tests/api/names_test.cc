#include "switchboard/api/names.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "switchboard/api/limits.h"

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

TEST(Names, CalloutAccount) {
  for (std::string ok : std::vector<std::string>{"HATCHET", "a", "team_a-1",
                                                 std::string(kMaxCalloutAccountLength, 'A')}) {
    EXPECT_EQ(CheckCalloutAccount(ok), "") << ok;
  }
  struct Bad {
    std::string value, says;
  };
  for (const auto& b : std::vector<Bad>{
           {"", "empty"},
           {std::string(kMaxCalloutAccountLength + 1, 'A'), "at most 64"},
           {"a.b", "NATS account name"},
           {"a b", "NATS account name"},
           {"$SYS", "NATS account name"},
           {"$G", "global account"},
           {"SWITCHBOARD_AUTH", "authorizer's own user"},
           {"SYS", "system account"},
       }) {
    EXPECT_NE(CheckCalloutAccount(b.value).find(b.says), std::string::npos)
        << b.value << ": " << CheckCalloutAccount(b.value);
  }
  // Account names are case-sensitive in NATS: only the exact reserved names.
  EXPECT_EQ(CheckCalloutAccount("sys"), "");
}

// Every Secret named after a NatsServer fits a Secret name at the longest
// NatsServer name, whichever mode the server runs in.
TEST(Names, ServerNameBoundFitsEveryDerivedSecret) {
  std::string longest(kMaxServerNameLength, 'n');
  EXPECT_EQ(CheckDnsSubdomain(DefaultConfigSecretName(longest)), "");
  EXPECT_EQ(CheckDnsSubdomain(DefaultCalloutSecretName(longest)), "");
  EXPECT_NE(CheckDnsSubdomain(DefaultCalloutSecretName(longest + "n")), "");
  EXPECT_EQ(kMaxServerNameLength, 240u);
}

TEST(Names, Derived) {
  EXPECT_EQ(DefaultEnvSecretName("hatchet"), "hatchet-pubsub-env");
  EXPECT_EQ(DefaultCredentialsSecretName("hatchet"), "hatchet-nats-credentials");
  EXPECT_EQ(DefaultUsername("team-a", "hatchet"), "team-a-hatchet");
  EXPECT_EQ(DefaultConfigSecretName("shared"), "shared-switchboard");
  EXPECT_EQ(DefaultCalloutSecretName("shared"), "shared-auth-callout");
  EXPECT_EQ(QualifiedName("ns", "n"), "ns/n");
  EXPECT_EQ(QualifiedName("", "n"), "n");
}

}  // namespace
}  // namespace switchboard::api
