#include "desired.h"

#include <crypt.h>
#include <gtest/gtest.h>

#include <cstring>

#include "switchboard/testing/process.h"
#include "switchboard/testing/temp_dir.h"

namespace switchboard::controller {
namespace {

TEST(Desired, PasswordsAreLongAndDistinct) {
  auto a = GeneratePassword();
  auto b = GeneratePassword();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->size(), 43u);
  EXPECT_NE(*a, *b);
  EXPECT_EQ(
      a->find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
      std::string::npos);
}

TEST(Desired, BcryptVerifies) {
  auto h = BcryptHash("s3cret");
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->rfind("$2b$11$", 0), 0u);
  struct crypt_data d;
  std::memset(&d, 0, sizeof d);
  EXPECT_STREQ(crypt_r("s3cret", h->c_str(), &d), h->c_str());
}

TEST(Desired, GeneratedPasswordsUseTheLowerWorkFactorAndStillVerify) {
  auto pw = GeneratePassword();
  ASSERT_TRUE(pw.ok());
  auto h = BcryptHashGenerated(*pw);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->rfind("$2b$06$", 0), 0u) << "256 random bits need no work factor; see credentials.h";
  struct crypt_data d;
  std::memset(&d, 0, sizeof d);
  EXPECT_STREQ(crypt_r(pw->c_str(), h->c_str(), &d), h->c_str());
}

RenderInput Input() {
  RenderInput in;
  in.server_key = "nats/shared";
  in.entries = {
      {"a/x",
       {{"a-x", "$2b$11$abcdefghijklmnopqrstuuJ6Vq1Z8zv0bZf4Q3yBCcW7dE5cZp1i.", "hatchet.a.*"}},
       1},
      {"b/y",
       {{"b-y", "$2b$11$abcdefghijklmnopqrstuuJ6Vq1Z8zv0bZf4Q3yBCcW7dE5cZp1i.", "hatchet.b.*"}},
       2}};
  return in;
}

TEST(Desired, RenderIsDeterministicAndPassesNatsServerCheck) {
  auto r1 = RenderInclude(Input());
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  ASSERT_TRUE(r1->rejected.empty()) << r1->rejected[0];
  std::string a = r1->text;
  EXPECT_EQ(a, RenderInclude(Input())->text);
  EXPECT_EQ(r1->hash.rfind("sha256:", 0), 0u);
  EXPECT_NE(a.find("max_payload: 16777216"), std::string::npos);
  EXPECT_NE(a.find("# a/x"), std::string::npos);
  EXPECT_LT(a.find("\"a-x\""), a.find("\"b-y\""));
  EXPECT_NE(a.find(R"(publish: {allow: ["hatchet.a.*"]})"), std::string::npos);
  testing::TempDir dir;
  dir.WriteFile("switchboard.conf", a);
  std::string main =
      dir.WriteFile("nats.conf", "listen: 127.0.0.1:4222\ninclude \"switchboard.conf\"\n");
  auto r = testing::Run({"nats-server", "-t", "-c", main});
  RenderInput bad = Input();
  bad.max_payload = 1024;
  EXPECT_FALSE(RenderInclude(bad).ok());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err << a;
}

TEST(Desired, EnvAndHash) {
  auto env = NatsEnv("nats://h:4222", "u", "p", "hatchet.a");
  EXPECT_EQ(env.size(), 5u);
  EXPECT_EQ(env["SERVER_MSGQUEUE_PUBSUB_KIND"], "nats");
  std::string h = EnvHash(env);
  EXPECT_EQ(h.rfind("sha256:", 0), 0u);
  env["SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD"] = "q";
  EXPECT_NE(EnvHash(env), h);
  EXPECT_EQ(RabbitEnv("amqp://x", 10, 20)["SERVER_MSGQUEUE_PUBSUB_RABBITMQ_MAX_SUB_CHANS"], "20");
  EXPECT_EQ(PostgresEnv(5, 1)["SERVER_MSGQUEUE_PUBSUB_POSTGRES_MIN_CONNS"], "1");
}

TEST(Desired, Quantities) {
  EXPECT_EQ(ParseQuantity(json("16Mi")), 16777216);
  EXPECT_EQ(ParseQuantity(json(33554432)), 33554432);
  EXPECT_EQ(ParseQuantity(json("64Mi")), 67108864);
  EXPECT_EQ(ParseQuantity(json("lots")), -1);
}

}  // namespace
}  // namespace switchboard::controller
