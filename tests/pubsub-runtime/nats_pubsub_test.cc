// NatsPubSub against a real nats-server (one per test, free loopback port,
// max_payload 16 MiB unless the test says otherwise).
#include "switchboard/pubsub/nats_pubsub.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>

#include "nats_test_util.h"
#include "switchboard/pubsub/codec.h"
#include "switchboard/pubsub/compression.h"
#include "switchboard/pubsub/nats_client.h"
#include "switchboard/testing/nats_server.h"
#include "switchboard/testing/net.h"
#include "switchboard/testing/process.h"
#include "switchboard/testing/temp_dir.h"

namespace switchboard::pubsub {
namespace {

using testing::NatsServer;
using testutil::Collector;
using testutil::Options;
using testutil::RandomBytes;
using testutil::RawConnection;
using testutil::WireTap;

constexpr const char* kTenant = "8f3b1c2d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";

std::unique_ptr<NatsPubSub> MustConnect(const NatsOptions& o) {
  auto r = NatsPubSub::Connect(o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : nullptr;
}

TEST(NatsPubSubTest, FanOutToEverySubscriber) {
  NatsServer server;
  ASSERT_TRUE(server.ok()) << server.Log();
  auto a = MustConnect(Options(server.url()));
  auto b = MustConnect(Options(server.url()));
  auto pub = MustConnect(Options(server.url()));
  ASSERT_TRUE(a && b && pub);
  auto topic = *Topic::TenantStream(kTenant);
  Collector ca, cb;
  auto sa = a->Subscribe(topic, ca.handler());
  auto sb = b->Subscribe(topic, cb.handler());
  ASSERT_TRUE(sa.ok() && sb.ok());
  for (int i = 0; i < 20; ++i) {
    Message m;
    m.id = "task-" + std::to_string(i);
    m.tenant_id = kTenant;
    m.payloads = std::vector<std::string>{"{\"i\":" + std::to_string(i) + "}"};
    ASSERT_TRUE(pub->Publish(topic, m).ok());
  }
  ASSERT_TRUE(ca.WaitFor(20));
  ASSERT_TRUE(cb.WaitFor(20));
  for (const auto* c : {&ca, &cb}) {
    auto got = c->messages();
    for (int i = 0; i < 20; ++i) EXPECT_EQ(got[i].id, "task-" + std::to_string(i));
  }
}

TEST(NatsPubSubTest, SchedulerTopicRoundTripKeepsEveryField) {
  NatsServer server;
  ASSERT_TRUE(server.ok()) << server.Log();
  auto ps = MustConnect(Options(server.url()));
  ASSERT_TRUE(ps);
  auto topic = *Topic::SchedulerPartition("partition-1");
  Collector c;
  auto sub = ps->Subscribe(topic, c.handler());
  ASSERT_TRUE(sub.ok());
  Message m;
  m.id = "check-tenant-queue";
  m.tenant_id = kTenant;
  m.payloads = std::vector<std::string>{"{\"a\":1}", "", std::string("\0\xff", 2)};
  m.otel_carrier = std::map<std::string, std::string>{{"traceparent", "00-aa-bb-01"}};
  m.retries = 5;
  m.persistent = true;
  m.immediately_expire = true;
  ASSERT_TRUE(ps->Publish(topic, m).ok());
  ASSERT_TRUE(c.WaitFor(1));
  EXPECT_EQ(c.messages()[0], m);
}

TEST(NatsPubSubTest, EightMiBPayload) {
  NatsServer server;
  ASSERT_TRUE(server.ok()) << server.Log();
  auto ps = MustConnect(Options(server.url()));
  ASSERT_TRUE(ps);
  auto topic = *Topic::TenantStream(kTenant);
  Collector c;
  auto sub = ps->Subscribe(topic, c.handler());
  ASSERT_TRUE(sub.ok());
  Message m;
  m.id = "big";
  m.payloads = std::vector<std::string>{RandomBytes(8u << 20, 1)};
  ASSERT_TRUE(ps->Publish(topic, m).ok());
  ASSERT_TRUE(c.WaitFor(1, std::chrono::seconds(30)));
  EXPECT_EQ(c.messages()[0].payloads, m.payloads);
  EXPECT_FALSE(c.messages()[0].compressed);
}

TEST(NatsPubSubTest, MultiPayloadOver16MiBArrivesInChunksExactlyOnceInOrder) {
  NatsServer server;
  ASSERT_TRUE(server.ok()) << server.Log();
  auto opts = Options(server.url());
  opts.compression = false;  // random bytes: keep the sizes exact
  auto ps = MustConnect(opts);
  ASSERT_TRUE(ps);
  auto topic = *Topic::TenantStream(kTenant);
  Collector c;
  auto sub = ps->Subscribe(topic, c.handler());
  ASSERT_TRUE(sub.ok());
  // 4 x 5 MiB: ~26.7 MiB of base64, split 4 -> 2 + 2 (each ~13.3 MiB).
  Message m;
  m.id = "stream-event";
  m.payloads.emplace();
  for (int i = 0; i < 4; ++i) m.payloads->push_back(RandomBytes(5u << 20, 10 + i));
  ASSERT_TRUE(ps->Publish(topic, m).ok());
  ASSERT_TRUE(c.WaitFor(2, std::chrono::seconds(30)));
  auto got = c.messages();
  ASSERT_EQ(got.size(), 2u);
  std::vector<std::string> all;
  for (const auto& g : got) {
    EXPECT_EQ(g.id, "stream-event");
    EXPECT_EQ(g.PayloadCount(), 2u);
    for (const auto& p : *g.payloads) all.push_back(p);
  }
  EXPECT_EQ(all, *m.payloads);
}

TEST(NatsPubSubTest, SingleOversizedPayloadIsAnError) {
  NatsServer server;
  ASSERT_TRUE(server.ok()) << server.Log();
  auto opts = Options(server.url());
  opts.compression = false;
  auto ps = MustConnect(opts);
  ASSERT_TRUE(ps);
  Message m;
  m.payloads = std::vector<std::string>{RandomBytes(13u << 20, 3)};  // ~17.3 MiB base64
  Status s = ps->Publish(*Topic::TenantStream(kTenant), m);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  EXPECT_NE(s.message().find("16777216"), std::string::npos) << s.message();
}

TEST(NatsPubSubTest, PayloadCompressedByTheGzipToolDecodes) {
  NatsServer server;
  ASSERT_TRUE(server.ok()) << server.Log();
  testing::TempDir dir;
  std::string json = "{\"event\":\"task-completed\",\"output\":\"" + std::string(8000, 'x') + "\"}";
  std::string path = dir.WriteFile("payload.json", json);
  auto gz = testing::Run({"gzip", "-c", path});
  ASSERT_EQ(gz.exit_code, 0) << gz.err;
  auto ps = MustConnect(Options(server.url()));
  ASSERT_TRUE(ps);
  auto topic = *Topic::TenantStream(kTenant);
  Collector c;
  auto sub = ps->Subscribe(topic, c.handler());
  ASSERT_TRUE(sub.ok());
  // Published by plain nats.c, as another (Go) engine would.
  Message m;
  m.id = "from-go";
  m.compressed = true;
  m.payloads = std::vector<std::string>{gz.out};
  RawConnection raw(server.url());
  ASSERT_TRUE(raw.ok());
  std::string body = EncodeMessage(m);
  std::string subject = "hatchet.pubsub." + topic.name;
  ASSERT_EQ(natsConnection_Publish(raw.get(), subject.c_str(), body.data(),
                                   static_cast<int>(body.size())),
            NATS_OK);
  ASSERT_EQ(natsConnection_Flush(raw.get()), NATS_OK);
  ASSERT_TRUE(c.WaitFor(1));
  auto got = c.messages()[0];
  EXPECT_FALSE(got.compressed) << "subscribers clear the flag";
  ASSERT_EQ(got.PayloadCount(), 1u);
  EXPECT_EQ((*got.payloads)[0], json);
}

TEST(NatsPubSubTest, CustomPrefixIsTheExactSubjectOnTheWire) {
  NatsServer server;
  ASSERT_TRUE(server.ok()) << server.Log();
  RawConnection raw(server.url());
  ASSERT_TRUE(raw.ok());
  auto topic = *Topic::TenantStream(kTenant);
  std::string subject = std::string("team-a.hatchet.") + kTenant + "_v1";
  natsSubscription* rs = nullptr;
  ASSERT_EQ(natsConnection_SubscribeSync(&rs, raw.get(), subject.c_str()), NATS_OK);
  ASSERT_EQ(natsConnection_Flush(raw.get()), NATS_OK);
  auto opts = Options(server.url(), "team-a.hatchet");
  opts.compression = true;
  auto ps = MustConnect(opts);
  ASSERT_TRUE(ps);
  Message m;
  m.id = "prefixed";
  m.payloads = std::vector<std::string>{std::string(6000, 'p')};  // over 5 KiB: gzip on the wire
  ASSERT_TRUE(ps->Publish(topic, m).ok());
  natsMsg* msg = nullptr;
  ASSERT_EQ(natsSubscription_NextMsg(&msg, rs, 10000), NATS_OK);
  EXPECT_EQ(std::string(natsMsg_GetSubject(msg)), subject);
  auto wire = DecodeMessage(std::string_view(natsMsg_GetData(msg), natsMsg_GetDataLength(msg)));
  natsMsg_Destroy(msg);
  natsSubscription_Destroy(rs);
  ASSERT_TRUE(wire.ok()) << wire.status().ToString();
  EXPECT_EQ(wire->id, "prefixed");
  EXPECT_TRUE(wire->compressed);
  ASSERT_EQ(wire->PayloadCount(), 1u);
  EXPECT_EQ(static_cast<unsigned char>((*wire->payloads)[0][0]), 0x1f) << "gzip magic";
  EXPECT_LT((*wire->payloads)[0].size(), 6000u);
}

// Hatchet's NATS backend never compresses on publish; neither does the
// runtime unless asked to.
TEST(NatsPubSubTest, PublishesUncompressedByDefaultLikeTheEngine) {
  NatsServer server;
  ASSERT_TRUE(server.ok()) << server.Log();
  auto topic = *Topic::TenantStream(kTenant);
  WireTap tap(server.url(), "hatchet.pubsub." + topic.name);
  ASSERT_TRUE(tap.ok());
  auto ps = MustConnect(Options(server.url()));
  ASSERT_TRUE(ps);
  Message m;
  m.id = "big-json";
  m.payloads = std::vector<std::string>{"{\"out\":\"" + std::string(64 * 1024, 'j') + "\"}"};
  ASSERT_TRUE(ps->Publish(topic, m).ok());
  std::string body = tap.Next();
  EXPECT_EQ(body, EncodeMessage(m)) << "exactly the bytes Go's encoding/json would send";
  EXPECT_EQ(body.find("\"compressed\""), std::string::npos);
}

// With compression on, a payload that gzip would make larger (random
// bytes) goes out as it was: `compressed` unset, not one byte more.
TEST(NatsPubSubTest, CompressionNeverSendsMoreThanTheOriginal) {
  NatsServer server;
  ASSERT_TRUE(server.ok()) << server.Log();
  auto topic = *Topic::TenantStream(kTenant);
  WireTap tap(server.url(), "hatchet.pubsub." + topic.name);
  ASSERT_TRUE(tap.ok());
  auto opts = Options(server.url());
  opts.compression = true;
  auto ps = MustConnect(opts);
  ASSERT_TRUE(ps);
  Collector c;
  auto sub = ps->Subscribe(topic, c.handler());
  ASSERT_TRUE(sub.ok());

  Message random;
  random.id = "random";
  random.payloads = std::vector<std::string>{RandomBytes(1u << 20, 42)};
  ASSERT_TRUE(ps->Publish(topic, random).ok());
  std::string body = tap.Next();
  EXPECT_EQ(body.size(), EncodedSize(random)) << "1 MiB of random bytes, sent uncompressed";
  EXPECT_EQ(body, EncodeMessage(random));

  Message text;
  text.id = "text";
  text.payloads = std::vector<std::string>{std::string(1u << 20, 't')};
  ASSERT_TRUE(ps->Publish(topic, text).ok());
  body = tap.Next();
  auto wire = DecodeMessage(body);
  ASSERT_TRUE(wire.ok()) << wire.status().ToString();
  EXPECT_TRUE(wire->compressed);
  EXPECT_LT(body.size(), EncodedSize(text) / 100);

  ASSERT_TRUE(c.WaitFor(2, std::chrono::seconds(30)));
  EXPECT_EQ(c.messages()[0], random);
  EXPECT_EQ(c.messages()[1], text) << "delivered decompressed, flag cleared";
}

TEST(NatsPubSubTest, RefusesServerLeftAtTheOneMiBDefault) {
  NatsServer server("", 0);
  ASSERT_TRUE(server.ok()) << server.Log();
  auto r = NatsPubSub::Connect(Options(server.url()));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("1048576"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("16777216"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("max_payload"), std::string::npos);
}

TEST(NatsPubSubTest, PublishFailsFastWhileServerIsDownThenRecovers) {
  NatsServer server;
  ASSERT_TRUE(server.ok()) << server.Log();
  std::atomic<int> reconnects{0};
  NatsOptions options = Options(server.url());
  options.on_reconnected = [&] { reconnects++; };
  auto ps = MustConnect(options);
  ASSERT_TRUE(ps);
  EXPECT_EQ(reconnects.load(), 0) << "the first connect is not a reconnect";
  auto topic = *Topic::TenantStream(kTenant);
  Collector c;
  auto sub = ps->Subscribe(topic, c.handler());
  ASSERT_TRUE(sub.ok());
  server.Stop();
  ASSERT_TRUE(testing::WaitFor([&] { return !ps->IsReady(); }, std::chrono::seconds(10)));
  Message m;
  m.id = "while-down";
  m.payloads = std::vector<std::string>{"x"};
  Status s = ps->Publish(topic, m);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  ASSERT_TRUE(server.Start()) << server.Log();
  ASSERT_TRUE(testing::WaitFor([&] { return ps->IsReady(); }, std::chrono::seconds(20)));
  EXPECT_TRUE(testing::WaitFor([&] { return reconnects.load() >= 1; }, std::chrono::seconds(10)))
      << reconnects.load() << " reconnect callbacks";
  // The subscription was re-established on reconnect; nothing sent while
  // down is delivered (nothing was buffered).
  m.id = "after-restart";
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        (void)ps->Publish(topic, m);
        return c.size() > 0;
      },
      std::chrono::seconds(10), std::chrono::milliseconds(50)));
  for (const auto& got : c.messages()) EXPECT_EQ(got.id, "after-restart");
}

// reconnect = false (the authorizer's connections with the other
// isolation's login): a lost connection is closed for good at once and
// says so, where the default goes on reconnecting.
TEST(NatsPubSubTest, WithoutReconnectALostConnectionIsClosedForGood) {
  NatsServer server;
  ASSERT_TRUE(server.ok()) << server.Log();
  std::atomic<int> unavailable{0};
  NatsOptions once = Options(server.url());
  once.reconnect = false;
  once.on_error = [&](const Status& s) {
    if (s.code() == StatusCode::kUnavailable) unavailable++;
  };
  auto closing = NatsClient::Connect(once);
  ASSERT_TRUE(closing.ok()) << closing.status().ToString();
  auto reconnecting = NatsClient::Connect(Options(server.url()));
  ASSERT_TRUE(reconnecting.ok()) << reconnecting.status().ToString();
  EXPECT_EQ((*closing)->State(), ConnectionState::kConnected);
  server.Stop();
  EXPECT_TRUE(testing::WaitFor([&] { return (*closing)->State() == ConnectionState::kClosed; },
                               std::chrono::seconds(10)));
  EXPECT_TRUE(testing::WaitFor([&] { return unavailable.load() >= 1; }, std::chrono::seconds(10)));
  EXPECT_TRUE(
      testing::WaitFor([&] { return (*reconnecting)->State() == ConnectionState::kReconnecting; },
                       std::chrono::seconds(10)));
  ASSERT_TRUE(server.Start()) << server.Log();
  EXPECT_TRUE(
      testing::WaitFor([&] { return (*reconnecting)->State() == ConnectionState::kConnected; },
                       std::chrono::seconds(20)));
  EXPECT_EQ((*closing)->State(), ConnectionState::kClosed);
}

// Permissions as the operator renders them: `<prefix>.*` only.
const char* kAuthConfig = R"(
authorization {
  users = [
    { user: "team-a", password: "s3cret-a",
      permissions: { publish: ["team.a.*"], subscribe: ["team.a.*"] } }
  ]
}
)";

TEST(NatsPubSubTest, UserPasswordAuthWithPermissionsReportsViolations) {
  NatsServer server(kAuthConfig);
  ASSERT_TRUE(server.ok()) << server.Log();
  auto bad = Options(server.url(), "team.a");
  bad.username = "team-a";
  bad.password = "not-the-password";
  auto denied = NatsPubSub::Connect(bad);
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.status().code(), StatusCode::kUnauthenticated) << denied.status().ToString();
  EXPECT_EQ(denied.status().message().find("not-the-password"), std::string::npos);

  auto own = Options(server.url(), "team.a");
  own.username = "team-a";
  own.password = "s3cret-a";
  auto ps = MustConnect(own);
  ASSERT_TRUE(ps);
  auto topic = *Topic::TenantStream(kTenant);
  Collector c;
  auto sub = ps->Subscribe(topic, c.handler());
  ASSERT_TRUE(sub.ok());
  Message m;
  m.id = "allowed";
  ASSERT_TRUE(ps->Publish(topic, m).ok());
  ASSERT_TRUE(c.WaitFor(1));

  // The same user on another installation's prefix: the server refuses the
  // publish asynchronously and the error callback hears about it.
  std::mutex mu;
  std::vector<Status> errors;
  auto other = own;
  other.subject_prefix = "team.b";
  other.on_error = [&](const Status& s) {
    std::lock_guard lock(mu);
    errors.push_back(s);
  };
  auto outside = MustConnect(other);
  ASSERT_TRUE(outside);
  EXPECT_TRUE(outside->Publish(topic, m).ok()) << "nats.c reports violations only asynchronously";
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        std::lock_guard lock(mu);
        return !errors.empty();
      },
      std::chrono::seconds(10)));
  std::lock_guard lock(mu);
  EXPECT_EQ(errors[0].code(), StatusCode::kPermissionDenied);
  EXPECT_NE(errors[0].message().find("team.b." + topic.name), std::string::npos)
      << errors[0].message();
}

// Two installations on one server, as the operator renders them: each user
// may publish and subscribe on its own prefix only.
const char* kTwoUsersConfig = R"(
authorization {
  users = [
    { user: "team-a", password: "pw-a",
      permissions: { publish: ["team.a.*"], subscribe: ["team.a.*"] } }
    { user: "team-b", password: "pw-b",
      permissions: { publish: ["team.b.*"], subscribe: ["team.b.*"] } }
  ]
}
)";

NatsOptions As(const NatsServer& server, const std::string& user, const std::string& password,
               const std::string& prefix) {
  auto o = Options(server.url(), prefix);
  o.username = user;
  o.password = password;
  return o;
}

TEST(NatsPubSubTest, ConfirmReturnsTheServersRefusalOfAPublish) {
  NatsServer server(kTwoUsersConfig);
  ASSERT_TRUE(server.ok()) << server.Log();
  auto topic = *Topic::TenantStream(kTenant);
  Message m;
  m.id = "isolation-check";
  m.payloads = std::vector<std::string>{"{}"};

  // team-b on its own prefix: accepted.
  auto b = MustConnect(As(server, "team-b", "pw-b", "team.b"));
  ASSERT_TRUE(b);
  ASSERT_TRUE(b->Publish(topic, m).ok());
  EXPECT_TRUE(b->Confirm(std::chrono::seconds(5)).ok());

  // team-a's credentials on team-b's prefix: nats.c accepts the publish
  // locally; the verdict comes from the server.
  auto a_on_b = MustConnect(As(server, "team-a", "pw-a", "team.b"));
  ASSERT_TRUE(a_on_b);
  ASSERT_TRUE(a_on_b->Publish(topic, m).ok()) << "refusals are asynchronous in NATS";
  Status verdict = a_on_b->Confirm(std::chrono::seconds(5));
  EXPECT_EQ(verdict.code(), StatusCode::kPermissionDenied) << verdict.ToString();
  EXPECT_NE(verdict.message().find("Permissions Violation for Publish to"), std::string::npos)
      << "the server's own message: " << verdict.message();
  EXPECT_NE(verdict.message().find("team.b." + topic.name), std::string::npos) << verdict.message();
  EXPECT_EQ(verdict.message().find("pw-a"), std::string::npos) << "password leaked";
  // Reported once: a later Confirm with nothing new refused is OK.
  EXPECT_TRUE(a_on_b->Confirm(std::chrono::seconds(5)).ok());

  // team-a on its own prefix, after a refusal on another connection: OK.
  auto a = MustConnect(As(server, "team-a", "pw-a", "team.a"));
  ASSERT_TRUE(a);
  ASSERT_TRUE(a->Publish(topic, m).ok());
  EXPECT_TRUE(a->Confirm(std::chrono::seconds(5)).ok());
}

TEST(NatsPubSubTest, SubscribeReturnsTheServersRefusal) {
  NatsServer server(kTwoUsersConfig);
  ASSERT_TRUE(server.ok()) << server.Log();
  auto topic = *Topic::SchedulerPartition("p1");
  auto a_on_b = MustConnect(As(server, "team-a", "pw-a", "team.b"));
  ASSERT_TRUE(a_on_b);
  Collector c;
  auto denied = a_on_b->Subscribe(topic, c.handler());
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.status().code(), StatusCode::kPermissionDenied) << denied.status().ToString();
  EXPECT_NE(denied.status().message().find("Permissions Violation for Subscription to"),
            std::string::npos)
      << denied.status().message();
  EXPECT_NE(denied.status().message().find("team.b." + topic.name), std::string::npos);
  // The connection stays usable for what the user may do.
  auto b = MustConnect(As(server, "team-b", "pw-b", "team.b"));
  ASSERT_TRUE(b);
  auto allowed = b->Subscribe(topic, c.handler());
  ASSERT_TRUE(allowed.ok()) << allowed.status().ToString();
}

TEST(NatsPubSubTest, ARefusedPublishIsNotBlamedOnALaterSubscribe) {
  // A user that may subscribe to the whole prefix but publish to one topic.
  NatsServer server(R"(authorization { users = [ { user: "reader", password: "pw",
      permissions: { publish: ["team.c.out_v1"], subscribe: ["team.c.*"] } } ] })");
  ASSERT_TRUE(server.ok()) << server.Log();
  auto ps = MustConnect(As(server, "reader", "pw", "team.c"));
  ASSERT_TRUE(ps);
  auto topic = *Topic::TenantStream(kTenant);
  Message m;
  ASSERT_TRUE(ps->Publish(topic, m).ok());
  ASSERT_TRUE(ps->Flush(std::chrono::seconds(5)).ok());  // the refusal is now recorded
  Collector c;
  auto sub = ps->Subscribe(topic, c.handler());
  EXPECT_TRUE(sub.ok()) << sub.status().ToString();
  Status verdict = ps->Confirm(std::chrono::seconds(5));
  EXPECT_EQ(verdict.code(), StatusCode::kPermissionDenied) << "left for Confirm";
  EXPECT_NE(verdict.message().find("Publish to"), std::string::npos) << verdict.message();
  ASSERT_TRUE(ps->Publish(*Topic::FromName("out_v1"), m).ok());
  EXPECT_TRUE(ps->Confirm(std::chrono::seconds(5)).ok());
}

TEST(NatsPubSubTest, ConnectionClosedForGoodIsReported) {
  // Removing a connected user drops its connection; nats.c then fails to
  // authenticate on reconnect and gives up for good (DESIGN.md §6). The
  // caller must hear about it, not just see IsReady() stay false.
  NatsServer server(R"(authorization { users = [ { user: "u", password: "pw" } ] })");
  ASSERT_TRUE(server.ok()) << server.Log();
  std::mutex mu;
  std::vector<Status> errors;
  auto opts = Options(server.url());
  opts.username = "u";
  opts.password = "pw";
  opts.on_error = [&](const Status& s) {
    std::lock_guard lock(mu);
    errors.push_back(s);
  };
  auto ps = MustConnect(opts);
  ASSERT_TRUE(ps);
  ASSERT_TRUE(server.Reload(R"(authorization { users = [ { user: "other", password: "x" } ] })"));
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        std::lock_guard lock(mu);
        for (const auto& e : errors) {
          if (e.code() == StatusCode::kUnavailable &&
              e.message().find("closed for good") != std::string::npos) {
            return true;
          }
        }
        return false;
      },
      std::chrono::seconds(20)))
      << server.Log();
  EXPECT_FALSE(ps->IsReady());
  Message m;
  EXPECT_EQ(ps->Publish(*Topic::TenantStream(kTenant), m).code(), StatusCode::kUnavailable);
}

TEST(NatsPubSubTest, UserJwtToAServerOutsideOperatorModeFailsToConnect) {
  // A server with users in its config (no operator) sends no nonce: the
  // connect fails with a reason, and the signer is never asked.
  NatsServer server(R"(authorization { users = [ { user: "u", password: "pw" } ] })");
  ASSERT_TRUE(server.ok()) << server.Log();
  std::atomic<int> signed_nonces{0};
  auto opts = Options(server.url());
  opts.user_jwt = std::make_shared<UserJwtCredentials>(UserJwtCredentials{
      "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.e30.c2ln", [&](std::string_view) {
        signed_nonces++;
        return Result<std::string>(std::string(64, 'x'));
      }});
  auto r = NatsPubSub::Connect(opts);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsNoNonceRefusal(r.status())) << r.status().ToString();
  EXPECT_EQ(signed_nonces.load(), 0);
}

TEST(NatsPubSubTest, HandlerErrorsAndExceptionsAreContained) {
  NatsServer server;
  ASSERT_TRUE(server.ok()) << server.Log();
  auto ps = MustConnect(Options(server.url()));
  ASSERT_TRUE(ps);
  auto topic = *Topic::TenantStream(kTenant);
  std::atomic<int> calls{0};
  auto sub = ps->Subscribe(topic, [&](const Message& m) -> Status {
    ++calls;
    if (m.id == "throw") throw std::runtime_error("handler bug");
    if (m.id == "fail") return Status::Internal("handler failed");
    return Status::Ok();
  });
  ASSERT_TRUE(sub.ok());
  for (const char* id : {"throw", "fail", "fine"}) {
    Message m;
    m.id = id;
    ASSERT_TRUE(ps->Publish(topic, m).ok());
  }
  // Each delivered exactly once (no redelivery), and the subscription lives on.
  ASSERT_TRUE(testing::WaitFor([&] { return calls == 3; }, std::chrono::seconds(10)));
  EXPECT_TRUE(ps->IsReady());
}

TEST(NatsPubSubTest, UndecodableAndBombMessagesAreDroppedNotDelivered) {
  NatsServer server;
  ASSERT_TRUE(server.ok()) << server.Log();
  auto opts = Options(server.url());
  opts.max_decompressed_bytes = 1u << 20;
  auto ps = MustConnect(opts);
  ASSERT_TRUE(ps);
  auto topic = *Topic::TenantStream(kTenant);
  Collector c;
  auto sub = ps->Subscribe(topic, c.handler());
  ASSERT_TRUE(sub.ok());
  RawConnection raw(server.url());
  ASSERT_TRUE(raw.ok());
  std::string subject = "hatchet.pubsub." + topic.name;
  Message bomb;
  bomb.id = "bomb";
  bomb.compressed = true;
  bomb.payloads = std::vector<std::string>{GzipCompress(std::string(8u << 20, '\0'))};
  for (const std::string& body : {std::string("not json"), EncodeMessage(bomb)}) {
    ASSERT_EQ(natsConnection_Publish(raw.get(), subject.c_str(), body.data(),
                                     static_cast<int>(body.size())),
              NATS_OK);
  }
  Message ok;
  ok.id = "after";
  std::string body = EncodeMessage(ok);
  ASSERT_EQ(natsConnection_Publish(raw.get(), subject.c_str(), body.data(),
                                   static_cast<int>(body.size())),
            NATS_OK);
  ASSERT_TRUE(c.WaitFor(1));
  EXPECT_EQ(c.size(), 1u);
  EXPECT_EQ(c.messages()[0].id, "after") << "messages on one subscription arrive in order";
}

TEST(NatsPubSubTest, UnsubscribeStopsDeliveryEvenFromInsideTheHandler) {
  NatsServer server;
  ASSERT_TRUE(server.ok()) << server.Log();
  auto ps = MustConnect(Options(server.url()));
  ASSERT_TRUE(ps);
  auto topic = *Topic::TenantStream(kTenant);
  // A handler that drops its own subscription on the first message: no
  // deadlock, and no further calls.
  std::atomic<int> calls{0};
  std::unique_ptr<Subscription> self;
  std::mutex mu;
  auto sub = ps->Subscribe(topic, [&](const Message&) {
    ++calls;
    std::lock_guard lock(mu);
    self.reset();
    return Status::Ok();
  });
  ASSERT_TRUE(sub.ok());
  {
    std::lock_guard lock(mu);
    self = std::move(sub).value();
  }
  // A second subscription on the same connection is the barrier: once it
  // has seen the last message, the first would have seen it too.
  Collector barrier;
  auto other = ps->Subscribe(topic, barrier.handler());
  ASSERT_TRUE(other.ok());
  Message m;
  ASSERT_TRUE(ps->Publish(topic, m).ok());
  ASSERT_TRUE(barrier.WaitFor(1));
  ASSERT_TRUE(testing::WaitFor([&] { return calls == 1; }, std::chrono::seconds(10)));
  ASSERT_TRUE(ps->Flush(std::chrono::seconds(5)).ok());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(ps->Publish(topic, m).ok());
  ASSERT_TRUE(barrier.WaitFor(6));
  EXPECT_EQ(calls, 1);
  // Destroying a subscription from outside waits for a running handler.
  other->reset();
  ASSERT_TRUE(ps->Publish(topic, m).ok());
  ASSERT_TRUE(ps->Flush(std::chrono::seconds(5)).ok());
  EXPECT_EQ(barrier.size(), 6u);
}

TEST(NatsPubSubTest, SeedListWithADeadServerConnects) {
  NatsServer server;
  ASSERT_TRUE(server.ok()) << server.Log();
  int dead = testing::FreePort();
  auto opts = Options("nats://127.0.0.1:" + std::to_string(dead) + ", " + server.url());
  auto ps = MustConnect(opts);
  ASSERT_TRUE(ps);
  EXPECT_NE(ps->ConnectedUrl().find(std::to_string(server.port())), std::string::npos);
}

}  // namespace
}  // namespace switchboard::pubsub
