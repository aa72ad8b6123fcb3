#include "switchboard/operator_logic/env.h"

#include <gtest/gtest.h>

namespace switchboard::operator_logic {
namespace {

TEST(Env, NatsHasExactlyTheEngineVariables) {
  SecretData d = NatsEnv("nats://a:4222,nats://b:4222", "team-a-hatchet", "pw", "hatchet.team-a");
  SecretData want = {
      {"SERVER_MSGQUEUE_PUBSUB_KIND", "nats"},
      {"SERVER_MSGQUEUE_PUBSUB_NATS_URL", "nats://a:4222,nats://b:4222"},
      {"SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME", "team-a-hatchet"},
      {"SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD", "pw"},
      {"SERVER_MSGQUEUE_PUBSUB_NATS_SUBJECT_PREFIX", "hatchet.team-a"},
  };
  EXPECT_EQ(d, want);
}

TEST(Env, RabbitMq) {
  SecretData want = {
      {"SERVER_MSGQUEUE_PUBSUB_KIND", "rabbitmq"},
      {"SERVER_MSGQUEUE_PUBSUB_RABBITMQ_URL", "amqps://u:p@rmq:5671/"},
      {"SERVER_MSGQUEUE_PUBSUB_RABBITMQ_MAX_PUB_CHANS", "10"},
      {"SERVER_MSGQUEUE_PUBSUB_RABBITMQ_MAX_SUB_CHANS", "20"},
  };
  EXPECT_EQ(RabbitMqEnv("amqps://u:p@rmq:5671/", 10, 20), want);
}

TEST(Env, Postgres) {
  SecretData want = {
      {"SERVER_MSGQUEUE_PUBSUB_KIND", "postgres"},
      {"SERVER_MSGQUEUE_PUBSUB_POSTGRES_MAX_CONNS", "5"},
      {"SERVER_MSGQUEUE_PUBSUB_POSTGRES_MIN_CONNS", "1"},
  };
  EXPECT_EQ(PostgresEnv(5, 1), want);
}

TEST(EnvHash, StableFormatAndSensitiveToEveryByte) {
  SecretData a = NatsEnv("nats://a:4222", "u", "p1", "x");
  std::string h = EnvHash(a);
  EXPECT_EQ(h.rfind("sha256:", 0), 0u);
  EXPECT_EQ(h.size(), 7u + 64u);
  EXPECT_EQ(EnvHash(NatsEnv("nats://a:4222", "u", "p1", "x")), h);
  EXPECT_NE(EnvHash(NatsEnv("nats://a:4222", "u", "p2", "x")), h) << "password rotation";
  EXPECT_NE(EnvHash(NatsEnv("nats://a:4222", "u-r1", "p1", "x")), h);
  // Length prefixes: moving bytes between key and value changes the hash.
  EXPECT_NE(EnvHash({{"ab", "c"}}), EnvHash({{"a", "bc"}}));
  EXPECT_NE(EnvHash({{"a", "b"}, {"c", "d"}}), EnvHash({{"a", "bc"}, {"", "d"}}));
  // Known value: sha256("1:a1:b").
  EXPECT_EQ(EnvHash({{"a", "b"}}),
            "sha256:facdde7abf1eac5b301273ab2e282f79bab0100f058833a7b8bdf9f80741e149");
}

}  // namespace
}  // namespace switchboard::operator_logic
