// The real HTTPS server on a free loopback port, with certificates made by
// the openssl command in the test: health, a review round trip, the body
// limit, TLS 1.2 as the floor, and certificate rotation without restart.
#include "switchboard/webhook_server/server.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <openssl/ssl.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "switchboard/testing/objects.h"
#include "switchboard/testing/temp_dir.h"
#include "switchboard/testing/test_certs.h"
#include "switchboard/testing/wait.h"

namespace switchboard::webhook_server {
namespace {

using nlohmann::json;
using std::chrono::seconds;

json BackendReview(const std::string& prefix) {
  json object = testing::BackendBuilder("team-a", "hatchet").Server("", "shared").Prefix(prefix);
  return testing::AdmissionReviewOf(object, "CREATE", nullptr,
                                    "0df28fbd-5f5f-4b5b-8e4c-b2f2b8f2c0a1");
}

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    certs_ = testing::MakeCerts(dir_.path());
    ASSERT_FALSE(certs_.cert.empty());
    // Serve copies, so rotation can replace them.
    cert_ = dir_.path() + "/tls.crt";
    key_ = dir_.path() + "/tls.key";
    std::filesystem::copy_file(certs_.cert, cert_);
    std::filesystem::copy_file(certs_.key, key_);
  }

  void StartServer(size_t max_body = 1 << 20) {
    ServerOptions o;
    o.bind_address = "127.0.0.1";
    o.port = 0;
    o.cert_file = cert_;
    o.key_file = key_;
    o.max_body_bytes = max_body;
    o.worker_threads = 4;
    auto s = WebhookServer::Start(o, source_, metrics_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(s).value();
  }

  // A client that verifies the server against the test CA (and 127.0.0.1
  // against the certificate's IP SAN).
  std::unique_ptr<httplib::SSLClient> Client() {
    auto c = std::make_unique<httplib::SSLClient>("127.0.0.1", server_->port());
    c->set_ca_cert_path(certs_.ca_cert.c_str());
    c->enable_server_certificate_verification(true);
    c->set_connection_timeout(5);
    c->set_read_timeout(5);
    return c;
  }

  testing::TempDir dir_;
  testing::TestCerts certs_;
  std::string cert_, key_;
  webhook_admission::StaticContextSource source_;
  Metrics metrics_;
  std::unique_ptr<WebhookServer> server_;
};

TEST_F(ServerTest, HealthAndReadiness) {
  StartServer();
  auto c = Client();
  auto h = c->Get("/healthz");
  ASSERT_TRUE(h) << httplib::to_string(h.error());
  EXPECT_EQ(h->status, 200);
  auto r = c->Get("/readyz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  auto missing = c->Get("/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_NE(missing->body.find("/validate"), std::string::npos) << missing->body;
}

TEST_F(ServerTest, ReadyzWaitsForTheCache) {
  class Unsynced : public webhook_admission::ContextSource {
   public:
    std::shared_ptr<const webhook_admission::ContextSnapshot> Snapshot() const override {
      return std::make_shared<const webhook_admission::ContextSnapshot>(rules::Context{});
    }
    bool Synced() const override { return false; }
  } unsynced;
  ServerOptions o;
  o.cert_file = cert_;
  o.key_file = key_;
  auto s = WebhookServer::Start(o, unsynced, metrics_);
  ASSERT_TRUE(s.ok());
  httplib::SSLClient c("127.0.0.1", (*s)->port());
  c.enable_server_certificate_verification(false);
  auto r = c.Get("/readyz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
}

TEST_F(ServerTest, ReviewRoundTripAndMetrics) {
  StartServer();
  auto c = Client();
  json review = BackendReview("hatchet..prod");
  auto v = c->Post("/validate", review.dump(), "application/json");
  ASSERT_TRUE(v) << httplib::to_string(v.error());
  ASSERT_EQ(v->status, 200);
  json out = json::parse(v->body);
  EXPECT_EQ(out["response"]["uid"], review["request"]["uid"]);
  EXPECT_EQ(out["response"]["allowed"], false);
  EXPECT_NE(out["response"]["status"]["message"].get<std::string>().find("spec.nats.subjectPrefix"),
            std::string::npos);

  review["request"]["object"]["spec"]["nats"].erase("subjectPrefix");
  auto m = c->Post("/mutate", review.dump(), "application/json");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->status, 200);
  json mout = json::parse(m->body);
  EXPECT_EQ(mout["response"]["allowed"], true);
  EXPECT_EQ(mout["response"]["patchType"], "JSONPatch");

  auto bad = c->Post("/validate", "{not json", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("not valid JSON"), std::string::npos) << bad->body;

  auto metrics = c->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("switchboard_webhook_requests_total{"), std::string::npos);
  EXPECT_NE(metrics->body.find("result=\"denied\""), std::string::npos) << metrics->body;
  EXPECT_NE(metrics->body.find("switchboard_webhook_request_duration_seconds_bucket"),
            std::string::npos);
}

TEST_F(ServerTest, BodyOverTheLimitGets413WithAMessage) {
  StartServer(4096);
  auto c = Client();
  std::string big = BackendReview("hatchet.a").dump();
  big.insert(big.size() - 1, ",\"padding\":\"" + std::string(8192, 'x') + "\"");
  auto r = c->Post("/validate", big, "application/json");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 413);
  EXPECT_NE(r->body.find("exceeds 4096 bytes"), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("--max-body-bytes"), std::string::npos) << r->body;
  // A request under the limit still works afterwards.
  auto ok = Client()->Post("/validate", BackendReview("hatchet.a").dump(), "application/json");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}

TEST_F(ServerTest, RefusesTlsOlderThan12) {
  StartServer();
  EXPECT_EQ(testing::PeerFingerprint(server_->port(), TLS1_1_VERSION), "");
  EXPECT_EQ(testing::PeerFingerprint(server_->port(), TLS1_2_VERSION),
            testing::FileFingerprint(certs_.cert));
}

TEST_F(ServerTest, RotatedCertificateIsServedWithoutRestart) {
  StartServer();
  std::string first = testing::FileFingerprint(certs_.cert);
  ASSERT_EQ(testing::PeerFingerprint(server_->port()), first);

  auto expiry = [&] {
    auto m = Client()->Get("/metrics");
    const std::string name = "switchboard_webhook_certificate_expiration_timestamp_seconds ";
    auto at = m ? m->body.find("\n" + name) : std::string::npos;
    return at == std::string::npos ? -1.0 : std::stod(m->body.substr(at + 1 + name.size()));
  };
  EXPECT_EQ(expiry(), static_cast<double>(testing::FileNotAfter(certs_.cert)));

  // A day longer than the first, so its notAfter differs.
  testing::TestCerts next = testing::MakeCerts(dir_.path(), "rotated", 3);
  ASSERT_FALSE(next.cert.empty());
  std::string second = testing::FileFingerprint(next.cert);
  ASSERT_NE(first, second);
  // Replace key then certificate by rename, like a Secret volume update: for
  // a moment the key does not match the certificate; the old pair is kept.
  std::filesystem::copy_file(next.key, key_ + ".tmp");
  std::filesystem::rename(key_ + ".tmp", key_);
  std::filesystem::copy_file(next.cert, cert_ + ".tmp");
  std::filesystem::rename(cert_ + ".tmp", cert_);

  EXPECT_TRUE(testing::WaitFor([&] { return testing::PeerFingerprint(server_->port()) == second; },
                               std::chrono::seconds(5)));
  // Clients trusting the CA keep working across the rotation.
  auto r = Client()->Get("/healthz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  auto m = Client()->Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("switchboard_webhook_certificate_reloads_total{result=\"ok\"} 1"),
            std::string::npos)
      << m->body;
  EXPECT_EQ(expiry(), static_cast<double>(testing::FileNotAfter(next.cert)));
  EXPECT_GT(testing::FileNotAfter(next.cert), testing::FileNotAfter(certs_.cert));
}

TEST_F(ServerTest, BrokenCertificateFileFailsStartWithItsName) {
  std::FILE* f = std::fopen(cert_.c_str(), "w");
  std::fputs("not a certificate\n", f);
  std::fclose(f);
  ServerOptions o;
  o.cert_file = cert_;
  o.key_file = key_;
  auto s = WebhookServer::Start(o, source_, metrics_);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find(cert_), std::string::npos) << s.status().message();
}

}  // namespace
}  // namespace switchboard::webhook_server
