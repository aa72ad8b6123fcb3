// The webhook under slow, huge and idle clients: the real HTTPS server on a
// free loopback port, clients written with OpenSSL directly so they can
// misbehave. What must hold: /healthz and a valid review are answered within
// the API server's deadline for this webhook (the chart's timeoutSeconds)
// while 64 clients trickle bytes or 1,000 connections sit idle; a chunked
// body over the limit gets 413 without the server's memory growing with the
// body; a request that is not complete by --request-timeout is cut off; at
// the connection cap the idlest connection makes room; and the server is
// healthy afterwards.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "raw_tls_client.h"
#include "switchboard/api/documents.h"
#include "switchboard/testing/objects.h"
#include "switchboard/testing/temp_dir.h"
#include "switchboard/testing/test_certs.h"
#include "switchboard/testing/wait.h"
#include "switchboard/webhook_server/server.h"

namespace switchboard::webhook_server {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::RawTlsClient;

// The deadline the API server gives this webhook, from the chart.
int ChartTimeoutSeconds() {
  const char* src = std::getenv("SWITCHBOARD_SOURCE_DIR");
  std::string dir = src != nullptr ? src : ".";
  auto text = api::ReadFileText(dir + "/charts/switchboard/values.yaml");
  if (!text.ok()) throw std::runtime_error(text.status().message());
  auto values = api::LoadDocuments(*text);
  if (!values.status.ok() || values.documents.empty()) {
    throw std::runtime_error("charts/switchboard/values.yaml: " + values.status.message());
  }
  return values.documents.front().value.at("webhook").at("timeoutSeconds").get<int>();
}

std::string ValidReview() {
  json object = testing::BackendBuilder("team-a", "hatchet")
                    .Server("team-a", "shared")
                    .Prefix("hatchet.team-a");
  return testing::AdmissionReviewOf(object, "CREATE", nullptr,
                                    "7c1d5a8e-0b7e-4f0a-9d61-3c2b1a0f9e88")
      .dump();
}

// Raises the soft open-files limit to at least `want` (the hard limit
// permitting). Returns the soft limit in effect.
rlim_t RaiseOpenFiles(rlim_t want) {
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  if (lim.rlim_cur < want) {
    lim.rlim_cur = std::min(want, lim.rlim_max);
    setrlimit(RLIMIT_NOFILE, &lim);
    getrlimit(RLIMIT_NOFILE, &lim);
  }
  return lim.rlim_cur;
}

// kB of a /proc/PID/status field such as VmRSS or VmHWM; -1 when missing.
long ProcStatusKb(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::atol(line.c_str() + field.size() + 1);
  }
  return -1;
}

class HostileClientsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    certs_ = testing::MakeCerts(dir_.path());
    ASSERT_FALSE(certs_.cert.empty());
    timeout_ = ChartTimeoutSeconds();
    ASSERT_GT(timeout_, 0);
  }

  ServerOptions Options() const {
    ServerOptions o;
    o.bind_address = "127.0.0.1";
    o.port = 0;
    o.cert_file = certs_.cert;
    o.key_file = certs_.key;
    return o;
  }

  void StartServer(const ServerOptions& o) {
    auto s = WebhookServer::Start(o, source_, metrics_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(s).value();
    port_ = server_->port();
  }

  // A well-behaved client (a new connection each time) that gives up after
  // the chart's timeoutSeconds, as the API server does.
  std::unique_ptr<httplib::SSLClient> Client() const {
    auto c = std::make_unique<httplib::SSLClient>("127.0.0.1", port_);
    c->set_ca_cert_path(certs_.ca_cert.c_str());
    c->enable_server_certificate_verification(true);
    c->set_connection_timeout(timeout_);
    c->set_read_timeout(timeout_);
    c->set_write_timeout(timeout_);
    return c;
  }

  // /healthz and a valid review, each answered within the deadline.
  void ExpectServing(const std::string& when) {
    auto h = Client()->Get("/healthz");
    ASSERT_TRUE(h) << when << ": /healthz: " << httplib::to_string(h.error());
    EXPECT_EQ(h->status, 200) << when;
    auto v = Client()->Post("/validate", ValidReview(), "application/json");
    ASSERT_TRUE(v) << when << ": /validate: " << httplib::to_string(v.error());
    ASSERT_EQ(v->status, 200) << when << ": " << v->body;
    json out = json::parse(v->body);
    EXPECT_EQ(out["response"]["uid"], "7c1d5a8e-0b7e-4f0a-9d61-3c2b1a0f9e88") << when;
    EXPECT_EQ(out["response"]["allowed"], true) << when << ": " << v->body;
  }

  std::string Metrics() {
    auto m = Client()->Get("/metrics");
    return m ? m->body : "";
  }

  testing::TempDir dir_;
  testing::TestCerts certs_;
  int timeout_ = 0;
  webhook_admission::StaticContextSource source_;
  webhook_server::Metrics metrics_;
  std::unique_ptr<WebhookServer> server_;
  int port_ = 0;
};

// Sends one byte per client every `interval` on its own thread until
// stopped; counts the rounds so the test can wait until every client is
// mid-request.
class Trickler {
 public:
  Trickler(std::vector<std::unique_ptr<RawTlsClient>>& clients, std::vector<std::string> streams,
           milliseconds interval)
      : clients_(clients), streams_(std::move(streams)), interval_(interval) {
    thread_ = std::thread([this] { Run(); });
  }
  ~Trickler() { Stop(); }
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  int rounds() const { return rounds_.load(); }
  int failed_sends() const { return failed_.load(); }

 private:
  void Run() {
    std::vector<size_t> pos(clients_.size(), 0);
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      for (size_t i = 0; i < clients_.size(); ++i) {
        const std::string& s = streams_[i % streams_.size()];
        if (!clients_[i]->Send(std::string(1, s[pos[i] % s.size()]))) failed_.fetch_add(1);
        ++pos[i];
      }
      rounds_.fetch_add(1);
      // Paces the trickle (the behaviour under test), interruptible by Stop.
      cv_.wait_for(lock, interval_, [this] { return stop_; });
    }
  }

  std::vector<std::unique_ptr<RawTlsClient>>& clients_;
  std::vector<std::string> streams_;
  milliseconds interval_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::atomic<int> rounds_{0};
  std::atomic<int> failed_{0};
  std::thread thread_;
};

TEST_F(HostileClientsTest, SixtyFourTricklingClientsDoNotDelayHealthOrReviews) {
  ServerOptions o = Options();
  o.request_timeout = seconds(300);  // the trickle must outlast the checks on any machine
  StartServer(o);
  ExpectServing("before");

  // Half trickle a header block that never ends, half a body declared as
  // 100,000 bytes: a slowloris on each part of the request.
  std::vector<std::unique_ptr<RawTlsClient>> clients;
  for (int i = 0; i < 64; ++i) {
    clients.push_back(std::make_unique<RawTlsClient>(port_));
    ASSERT_TRUE(clients.back()->Handshake()) << "client " << i;
    if (i % 2 == 1) {
      ASSERT_TRUE(clients.back()->Send(
          "POST /validate HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\n"
          "Content-Length: 100000\r\n\r\n{"));
    }
  }
  Trickler trickler(
      clients,
      {"POST /validate HTTP/1.1\r\nHost: webhook\r\nX-Slow: " + std::string(8000, 'a'), " "},
      milliseconds(50));
  ASSERT_TRUE(testing::WaitFor([&] { return trickler.rounds() >= 3; }, seconds(30)));
  EXPECT_GE(server_->connections(), 64);

  for (int i = 0; i < 3; ++i) ExpectServing("while 64 clients trickle, round " + std::to_string(i));
  // A keep-alive client (as the API server uses) is served too.
  auto keep = Client();
  for (int i = 0; i < 5; ++i) {
    auto h = keep->Get("/healthz");
    ASSERT_TRUE(h) << httplib::to_string(h.error());
    EXPECT_EQ(h->status, 200);
  }
  EXPECT_EQ(trickler.failed_sends(), 0) << "the trickling clients were cut off too early";
  trickler.Stop();
  clients.clear();
  EXPECT_TRUE(testing::WaitFor([&] { return server_->connections() <= 1; }, seconds(10)))
      << server_->connections();
  ExpectServing("after");
}

TEST_F(HostileClientsTest, ARequestNotCompleteByTheDeadlineIsCutOff) {
  ServerOptions o = Options();
  o.request_timeout = milliseconds(1000);
  StartServer(o);
  RawTlsClient slow(port_);
  ASSERT_TRUE(slow.Handshake());
  ASSERT_TRUE(slow.Send("POST /validate HTTP/1.1\r\nHost: webhook\r\nContent-Length: 50\r\n\r\n"));
  // One body byte every 100 ms would take 5 s; the server must hang up
  // although every read makes progress.
  bool closed = false;
  auto give_up = std::chrono::steady_clock::now() + seconds(30);
  while (!closed && std::chrono::steady_clock::now() < give_up) {
    if (!slow.Send("x")) break;
    closed = slow.ClosedByPeer(milliseconds(100));
  }
  EXPECT_TRUE(closed || !slow.Send("x")) << "the server kept a 1 s request open for 30 s";
  EXPECT_NE(
      Metrics().find("switchboard_webhook_rejected_requests_total{reason=\"request_timeout\"} 1"),
      std::string::npos);
  ExpectServing("after");
}

TEST_F(HostileClientsTest, ChunkedBodiesAreServedAndBoundedLikeOthers) {
  ServerOptions o = Options();
  o.max_body_bytes = 64 << 10;
  StartServer(o);
  // Under the limit: a chunked review is judged like any other.
  std::string review = ValidReview();
  RawTlsClient ok(port_);
  ASSERT_TRUE(ok.Handshake());
  std::string half = review.substr(0, review.size() / 2);
  std::string rest = review.substr(review.size() / 2);
  char size_a[32], size_b[32];
  std::snprintf(size_a, sizeof(size_a), "%zx", half.size());
  std::snprintf(size_b, sizeof(size_b), "%zx", rest.size());
  ASSERT_TRUE(ok.Send(
      "POST /validate HTTP/1.1\r\nHost: webhook\r\nTransfer-Encoding: chunked\r\n\r\n" +
      std::string(size_a) + "\r\n" + half + "\r\n" + size_b + "\r\n" + rest + "\r\n0\r\n\r\n"));
  auto r = ok.ReadResponse();
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find("\"allowed\":true"), std::string::npos) << r.body;

  // Over it: 413 while the client is still sending, then the connection ends.
  RawTlsClient big(port_);
  ASSERT_TRUE(big.Handshake());
  ASSERT_TRUE(
      big.Send("POST /validate HTTP/1.1\r\nHost: webhook\r\nTransfer-Encoding: chunked\r\n\r\n"));
  std::string chunk = "4000\r\n" + std::string(0x4000, ' ') + "\r\n";
  for (int i = 0; i < 256 && !big.Readable(); ++i) {
    if (!big.Send(chunk)) break;
  }
  auto refused = big.ReadResponse();
  EXPECT_EQ(refused.status, 413);
  EXPECT_NE(refused.body.find("exceeds 65536 bytes"), std::string::npos) << refused.body;
  EXPECT_TRUE(big.ClosedByPeer(seconds(10)));
  ExpectServing("after");
}

// The server runs in a child process so that its resident memory is its own.
TEST_F(HostileClientsTest, ChunkedBodyOverTheLimitKeepsMemoryBounded) {
  constexpr size_t kLimit = 4u << 20;
  int port_pipe[2], stop_pipe[2];
  ASSERT_EQ(pipe(port_pipe), 0);
  ASSERT_EQ(pipe(stop_pipe), 0);
  ServerOptions o = Options();
  o.max_body_bytes = kLimit;
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(port_pipe[0]);
    close(stop_pipe[1]);
    webhook_admission::StaticContextSource source;
    webhook_server::Metrics metrics;
    auto s = WebhookServer::Start(o, source, metrics);
    int port = s.ok() ? (*s)->port() : -1;
    if (write(port_pipe[1], &port, sizeof(port)) != sizeof(port)) _exit(3);
    char c;
    while (read(stop_pipe[0], &c, 1) > 0) {
    }
    if (s.ok()) (*s)->Stop();
    _exit(0);
  }
  close(port_pipe[1]);
  close(stop_pipe[0]);
  struct Reap {
    pid_t pid;
    int fd;
    ~Reap() {
      close(fd);  // the child stops when its pipe closes
      int status = 0;
      waitpid(pid, &status, 0);
    }
  } reap{child, stop_pipe[1]};
  ASSERT_EQ(read(port_pipe[0], &port_, sizeof(port_)), static_cast<ssize_t>(sizeof(port_)));
  close(port_pipe[0]);
  ASSERT_GT(port_, 0);

  ExpectServing("idle");
  long idle_kb = ProcStatusKb(child, "VmRSS");
  ASSERT_GT(idle_kb, 0);

  // 200 MB announced in 64 KiB chunks; the server must refuse at 4 MiB.
  RawTlsClient big(port_, seconds(30));
  ASSERT_TRUE(big.Handshake());
  ASSERT_TRUE(
      big.Send("POST /validate HTTP/1.1\r\nHost: webhook\r\nTransfer-Encoding: chunked\r\n\r\n"));
  std::string chunk = "10000\r\n" + std::string(0x10000, 'x') + "\r\n";
  size_t sent = 0;
  while (sent < (200u << 20) && !big.Readable()) {
    if (!big.Send(chunk)) break;
    sent += 0x10000;
  }
  auto refused = big.ReadResponse();
  EXPECT_EQ(refused.status, 413) << "after " << sent << " bytes";
  EXPECT_NE(refused.body.find("exceeds 4194304 bytes"), std::string::npos) << refused.body;
  EXPECT_LT(sent, 200u << 20);

  long peak_kb = ProcStatusKb(child, "VmHWM");
  EXPECT_LT(peak_kb, 2 * idle_kb + static_cast<long>(kLimit / 1024))
      << "idle " << idle_kb << " kB, peak " << peak_kb << " kB";
  ExpectServing("after the 413");
}

TEST_F(HostileClientsTest, ThousandIdleConnectionsDoNotStopService) {
  // 1,000 client sockets and as many accepted ones live in this process.
  ASSERT_GE(RaiseOpenFiles(4096), 2200u) << "raise the hard open-files limit (ulimit -Hn)";
  ServerOptions o = Options();       // default cap, 1024
  o.request_timeout = seconds(300);  // idle handshakes must outlast the checks on any machine
  StartServer(o);
  std::vector<std::unique_ptr<RawTlsClient>> idle;
  for (int i = 0; i < 1000; ++i) {
    idle.push_back(std::make_unique<RawTlsClient>(port_));
    ASSERT_TRUE(idle.back()->connected()) << "connection " << i;
  }
  // Some that finished a handshake and then went quiet, too.
  for (int i = 0; i < 10; ++i) {
    idle.push_back(std::make_unique<RawTlsClient>(port_));
    ASSERT_TRUE(idle.back()->Handshake());
  }
  EXPECT_TRUE(testing::WaitFor([&] { return server_->connections() >= 1000; }, seconds(30)))
      << server_->connections();
  ExpectServing("with 1,010 idle connections");
  idle.clear();
  EXPECT_TRUE(testing::WaitFor([&] { return server_->connections() <= 1; }, seconds(10)))
      << server_->connections();
  ExpectServing("after");
}

TEST_F(HostileClientsTest, AtTheCapTheIdlestConnectionMakesRoom) {
  ServerOptions o = Options();
  o.max_connections = 16;
  StartServer(o);
  std::vector<std::unique_ptr<RawTlsClient>> idle;
  for (int i = 0; i < 64; ++i) {
    idle.push_back(std::make_unique<RawTlsClient>(port_));
    ASSERT_TRUE(idle.back()->connected());
  }
  // The oldest idle connections were closed to admit the newer ones.
  EXPECT_TRUE(idle.front()->ClosedByPeer(seconds(10)));
  EXPECT_TRUE(testing::WaitFor([&] { return server_->connections() <= 16; }, seconds(10)))
      << server_->connections();
  ExpectServing("at the cap");
  idle.clear();
}

TEST_F(HostileClientsTest, StopClosesIdleConnectionsAndReturns) {
  StartServer(Options());
  std::vector<std::unique_ptr<RawTlsClient>> idle;
  for (int i = 0; i < 8; ++i) {
    idle.push_back(std::make_unique<RawTlsClient>(port_));
    ASSERT_TRUE(idle.back()->Handshake());
  }
  ASSERT_TRUE(testing::WaitFor([&] { return server_->connections() >= 8; }, seconds(10)));
  server_->Stop();  // must not wait for the 60 s idle timeout
  EXPECT_EQ(server_->connections(), 0);
  EXPECT_TRUE(idle.front()->ClosedByPeer(seconds(5)));
}

}  // namespace
}  // namespace switchboard::webhook_server
