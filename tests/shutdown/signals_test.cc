// SIGTERM of switchboard-operator, switchboard-config-sync and
// switchboard-webhook: exit 0 (as their READMEs say) within a deadline,
// and in the ASan build no sanitizer report (a leak would also make the
// exit code 23).
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "switchboard/testing/net.h"
#include "switchboard/testing/process.h"
#include "switchboard/testing/temp_dir.h"
#include "switchboard/testing/test_certs.h"
#include "switchboard/testing/wait.h"

namespace switchboard::testing {
namespace {

std::string Bin(const std::string& name) {
  const char* dir = std::getenv("SWITCHBOARD_BINARY_DIR");
  return std::string(dir ? dir : ".") + "/bin/" + name;
}

// A kubeconfig whose API server is a loopback port nothing listens on.
std::string DeadKubeconfig(const TempDir& dir) {
  std::string path = dir.path() + "/kubeconfig";
  std::ofstream(path) << "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                         "clusters:\n- name: c\n  cluster:\n    server: http://127.0.0.1:"
                      << FreePort()
                      << "\ncontexts:\n- name: c\n  context: {cluster: c, user: u, namespace: "
                         "default}\nusers:\n- name: u\n  user: {token: t}\n";
  return path;
}

bool HttpUp(int port, const std::string& path) {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(std::chrono::seconds(1));
  return static_cast<bool>(c.Get(path));
}

// SIGTERM, then the exit code within 60 s.
void ExpectCleanExitOnSigterm(Process* p) {
  ASSERT_TRUE(p->Signal(SIGTERM)) << "exited before the signal\n" << p->Log();
  auto code = p->Wait(std::chrono::seconds(60));
  ASSERT_TRUE(code.has_value()) << "still running 60 s after SIGTERM\n" << p->Log();
  EXPECT_EQ(*code, 0) << p->Log();
  EXPECT_EQ(p->Log().find("Sanitizer"), std::string::npos) << p->Log();
}

Process StartOperator(const TempDir& dir, int health_port, bool leader_elect) {
  Process::Options o;
  o.argv = {Bin("switchboard-operator"),
            "--kubeconfig",
            DeadKubeconfig(dir),
            "--health-addr",
            "127.0.0.1:" + std::to_string(health_port),
            "--metrics-addr",
            "127.0.0.1:" + std::to_string(FreePort())};
  if (leader_elect) o.argv.insert(o.argv.end(), {"--leader-elect", "--retry-period", "100ms"});
  o.log_path = dir.path() + "/operator.log";
  return Process(o);
}

// Standing by for the Lease: Stop reaches the elector through the stop
// watcher (Stop itself only sets a flag and writes an eventfd).
TEST(ShutdownSignalsTest, OperatorStandingByExitsZero) {
  TempDir dir;
  int health = FreePort();
  Process op = StartOperator(dir, health, true);
  ASSERT_TRUE(WaitFor([&] { return HttpUp(health, "/healthz"); }, std::chrono::seconds(60)))
      << op.Log();
  ExpectCleanExitOnSigterm(&op);
}

// Waiting for its caches (watches retrying against the dead API server).
TEST(ShutdownSignalsTest, OperatorWaitingForCachesExitsZero) {
  TempDir dir;
  int health = FreePort();
  Process op = StartOperator(dir, health, false);
  ASSERT_TRUE(WaitFor([&] { return HttpUp(health, "/healthz"); }, std::chrono::seconds(60)))
      << op.Log();
  ExpectCleanExitOnSigterm(&op);
}

TEST(ShutdownSignalsTest, ConfigSyncExitsZero) {
  TempDir dir;
  Process::Options o;
  o.argv = {Bin("switchboard-config-sync"),
            "--kubeconfig",
            DeadKubeconfig(dir),
            "--namespace",
            "nats",
            "--secret",
            "shared-switchboard",
            "--file",
            dir.path() + "/switchboard.conf",
            "--pid",
            std::to_string(getpid()),
            "--interval",
            "20ms"};
  o.log_path = dir.path() + "/config-sync.log";
  Process p(o);
  // Running its loop: it has logged the failed reads of the Secret.
  ASSERT_TRUE(WaitFor([&] { return p.Log().find("not synced") != std::string::npos; },
                      std::chrono::seconds(60)))
      << p.Log();
  ExpectCleanExitOnSigterm(&p);
}

// Reviews keep arriving from two clients while SIGTERM comes.
TEST(ShutdownSignalsTest, WebhookUnderLoadExitsZero) {
  TempDir dir;
  TestCerts certs = MakeCerts(dir.path());
  ASSERT_FALSE(certs.cert.empty());
  int port = FreePort();
  Process::Options o;
  o.argv = {Bin("switchboard-webhook"),
            "--tls-cert-file",
            certs.cert,
            "--tls-key-file",
            certs.key,
            "--port",
            std::to_string(port),
            "--bind-address",
            "127.0.0.1",
            "--metrics-port",
            "0",
            "--kubeconfig",
            DeadKubeconfig(dir)};
  o.log_path = dir.path() + "/webhook.log";
  Process w(o);
  auto up = [&] {
    httplib::SSLClient c("127.0.0.1", port);
    c.enable_server_certificate_verification(false);
    c.set_connection_timeout(std::chrono::seconds(1));
    return static_cast<bool>(c.Get("/healthz"));
  };
  ASSERT_TRUE(WaitFor(up, std::chrono::seconds(60))) << w.Log();
  const std::string review =
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1",)"
      R"("kind":{"group":"pubsub.switchboard.dev","version":"v1alpha1","kind":"PubSubBackend"},)"
      R"("operation":"CREATE","namespace":"team-a","object":{"apiVersion":)"
      R"("pubsub.switchboard.dev/v1alpha1","kind":"PubSubBackend","metadata":{"name":"h",)"
      R"("namespace":"team-a"},"spec":{"kind":"nats","nats":{"serverRef":{"name":"s",)"
      R"("namespace":"nats"},"subjectPrefix":"hatchet.team-a"}}}}})";
  std::atomic<bool> stop{false};
  std::atomic<int> answered{0};
  auto client = [&] {
    httplib::SSLClient c("127.0.0.1", port);
    c.enable_server_certificate_verification(false);
    c.set_connection_timeout(std::chrono::seconds(2));
    c.set_read_timeout(std::chrono::seconds(5));
    while (!stop) {
      if (auto r = c.Post("/validate", review, "application/json"); r && r->status == 200) {
        ++answered;
      }
    }
  };
  std::thread a(client), b(client);
  EXPECT_TRUE(WaitFor([&] { return answered >= 20; }, std::chrono::seconds(60)));
  ExpectCleanExitOnSigterm(&w);
  stop = true;
  a.join();
  b.join();
}

}  // namespace
}  // namespace switchboard::testing
