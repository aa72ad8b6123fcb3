#include "switchboard/pubsub/env.h"

#include <gtest/gtest.h>

namespace switchboard::pubsub {
namespace {

TEST(EnvTest, ReadsTheEngineVariables) {
  auto s = SettingsFromEnv(MapEnv({{kEnvUrl, "nats://a:4222,nats://b:4222"},
                                   {kEnvUsername, "team-a"},
                                   {kEnvPassword, "pw"},
                                   {kEnvSubjectPrefix, "hatchet.team-a"}}));
  EXPECT_EQ(s.urls, "nats://a:4222,nats://b:4222");
  EXPECT_EQ(s.username, "team-a");
  EXPECT_EQ(s.password, "pw");
  EXPECT_EQ(s.subject_prefix, "hatchet.team-a");
  auto o = ToNatsOptions(s);
  EXPECT_EQ(o.urls, s.urls);
  EXPECT_EQ(o.subject_prefix, "hatchet.team-a");
}

TEST(EnvTest, EmptyPrefixIsTheEngineDefault) {
  EXPECT_EQ(SettingsFromEnv(MapEnv({})).subject_prefix, "hatchet.pubsub");
  EXPECT_EQ(SettingsFromEnv(MapEnv({{kEnvSubjectPrefix, ""}})).subject_prefix, "hatchet.pubsub");
}

TEST(NatsOptionsTest, ValidationNamesTheField) {
  NatsOptions o;
  EXPECT_NE(ValidateNatsOptions(o).message().find("urls"), std::string::npos);
  o.urls = "http://x:4222";
  EXPECT_NE(ValidateNatsOptions(o).message().find("nats://"), std::string::npos);
  o.urls = "nats://u:secret@x:4222";
  auto s = ValidateNatsOptions(o);
  EXPECT_NE(s.message().find("credentials"), std::string::npos);
  EXPECT_EQ(s.message().find("secret"), std::string::npos) << "never echo credentials";
  o.urls = "nats://a:4222, tls://b:4222";
  EXPECT_TRUE(ValidateNatsOptions(o).ok());
  o.pinned = true;  // one server only
  EXPECT_NE(ValidateNatsOptions(o).message().find("pinned connection takes exactly one URL"),
            std::string::npos);
  o.urls = "nats://a:4222";
  EXPECT_TRUE(ValidateNatsOptions(o).ok());
  o.pinned = false;
  EXPECT_EQ(SplitUrls(" nats://a:4222, ,tls://b:4222 "),
            (std::vector<std::string>{"nats://a:4222", "tls://b:4222"}));
  o.subject_prefix = "a.>";
  EXPECT_NE(ValidateNatsOptions(o).message().find("subject prefix"), std::string::npos);
  o.subject_prefix = "ok";
  o.cert_file = "c.pem";
  EXPECT_NE(ValidateNatsOptions(o).message().find("key_file"), std::string::npos);
}

}  // namespace
}  // namespace switchboard::pubsub
