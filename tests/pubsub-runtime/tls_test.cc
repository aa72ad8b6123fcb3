// TLS against a real nats-server with certificates made by the openssl tool
// for this test: CA trust, client certificates, and the probe over tls://.
#include <gtest/gtest.h>

#include "nats_test_util.h"
#include "switchboard/pubsub/nats_pubsub.h"
#include "switchboard/pubsub/probe.h"
#include "switchboard/testing/nats_server.h"
#include "switchboard/testing/process.h"
#include "switchboard/testing/temp_dir.h"

namespace switchboard::pubsub {
namespace {

// A CA, a server certificate for 127.0.0.1 and a client certificate (EC
// P-256 keys: fast to generate).
class Certs {
 public:
  Certs() {
    const std::string d = dir_.path();
    dir_.WriteFile("server.ext", "subjectAltName=IP:127.0.0.1\n");
    dir_.WriteFile("client.ext", "extendedKeyUsage=clientAuth\n");
    ok_ = Sh({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
              "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", d + "/ca.key", "-out",
              d + "/ca.pem", "-days", "1", "-subj", "/CN=switchboard-test-ca"}) &&
          Issue("server", "/CN=127.0.0.1") && Issue("client", "/CN=client");
  }
  bool ok() const { return ok_; }
  std::string path(const std::string& name) const { return dir_.path() + "/" + name; }

 private:
  bool Sh(const std::vector<std::string>& argv) {
    auto r = testing::Run(argv);
    if (r.exit_code != 0) ADD_FAILURE() << argv[1] << ": " << r.err;
    return r.exit_code == 0;
  }
  bool Issue(const std::string& name, const std::string& subject) {
    const std::string d = dir_.path();
    return Sh({"openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
               "-nodes", "-keyout", d + "/" + name + ".key", "-out", d + "/" + name + ".csr",
               "-subj", subject}) &&
           Sh({"openssl", "x509", "-req", "-in", d + "/" + name + ".csr", "-CA", d + "/ca.pem",
               "-CAkey", d + "/ca.key", "-CAcreateserial", "-out", d + "/" + name + ".pem", "-days",
               "1", "-extfile", d + "/" + name + ".ext"});
  }

  testing::TempDir dir_;
  bool ok_ = false;
};

std::string TlsConfig(const Certs& c, bool verify_clients) {
  return "tls {\n  cert_file: \"" + c.path("server.pem") + "\"\n  key_file: \"" +
         c.path("server.key") + "\"\n  ca_file: \"" + c.path("ca.pem") + "\"\n" +
         (verify_clients ? "  verify: true\n" : "") + "}\n";
}

std::string TlsUrl(const testing::NatsServer& s) {
  return "tls://127.0.0.1:" + std::to_string(s.port());
}

TEST(TlsTest, ClientCertificateAndCaTrust) {
  Certs certs;
  ASSERT_TRUE(certs.ok());
  testing::NatsServer server(TlsConfig(certs, /*verify_clients=*/true));
  ASSERT_TRUE(server.ok()) << server.Log();

  auto opts = testutil::Options(TlsUrl(server));
  opts.ca_file = certs.path("ca.pem");
  opts.cert_file = certs.path("client.pem");
  opts.key_file = certs.path("client.key");
  auto ps = NatsPubSub::Connect(opts);
  ASSERT_TRUE(ps.ok()) << ps.status().ToString();
  auto topic = *Topic::SchedulerPartition("tls");
  testutil::Collector c;
  auto sub = (*ps)->Subscribe(topic, c.handler());
  ASSERT_TRUE(sub.ok());
  Message m;
  m.id = "over-tls";
  ASSERT_TRUE((*ps)->Publish(topic, m).ok());
  ASSERT_TRUE(c.WaitFor(1));
  EXPECT_EQ(c.messages()[0].id, "over-tls");

  // Without the client certificate the server refuses the handshake.
  opts.cert_file.clear();
  opts.key_file.clear();
  auto refused = NatsPubSub::Connect(opts);
  EXPECT_FALSE(refused.ok());
}

TEST(TlsTest, ProbeTrustsOnlyTheGivenCa) {
  Certs certs;
  ASSERT_TRUE(certs.ok());
  testing::NatsServer server(TlsConfig(certs, /*verify_clients=*/false));
  ASSERT_TRUE(server.ok()) << server.Log();
  auto r = Probe({.urls = TlsUrl(server), .ca_file = certs.path("ca.pem")});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto untrusted = Probe({.urls = TlsUrl(server), .timeout = std::chrono::seconds(3)});
  ASSERT_FALSE(untrusted.ok());
  EXPECT_EQ(untrusted.status().code(), StatusCode::kUnavailable) << untrusted.status().ToString();
  auto missing = Probe({.urls = TlsUrl(server), .ca_file = certs.path("nope.pem")});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("ca_file"), std::string::npos);
}

// The CA as PEM text (ca_pem) trusts as the file does; another CA's PEM is
// refused, also when the URL says nats:// (a CA makes TLS required), and
// text that is no certificate is refused without being echoed.
TEST(TlsTest, CaPemInMemory) {
  Certs certs, other;
  ASSERT_TRUE(certs.ok() && other.ok());
  testing::NatsServer server(TlsConfig(certs, /*verify_clients=*/false));
  ASSERT_TRUE(server.ok()) << server.Log();
  auto read = [](const std::string& path) { return testing::ReadFile(path); };
  auto opts = testutil::Options(TlsUrl(server));
  opts.ca_pem = read(certs.path("ca.pem"));
  ASSERT_NE(opts.ca_pem.find("BEGIN CERTIFICATE"), std::string::npos);
  auto ps = NatsPubSub::Connect(opts);
  ASSERT_TRUE(ps.ok()) << ps.status().ToString();
  EXPECT_TRUE((*ps)->Flush(std::chrono::seconds(5)).ok());

  opts.ca_pem = read(other.path("ca.pem"));
  opts.connect_timeout = std::chrono::seconds(3);
  auto wrong = NatsPubSub::Connect(opts);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kUnavailable) << wrong.status().ToString();
  opts.urls = "nats://127.0.0.1:" + std::to_string(server.port());
  EXPECT_FALSE(NatsPubSub::Connect(opts).ok());

  opts.ca_pem = "not a certificate";
  auto garbage = NatsPubSub::Connect(opts);
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(garbage.status().message().find("ca_pem"), std::string::npos);
  EXPECT_EQ(garbage.status().message().find("not a certificate"), std::string::npos);

  opts.ca_file = certs.path("ca.pem");
  auto both = ValidateNatsOptions(opts);
  EXPECT_EQ(both.code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace switchboard::pubsub
