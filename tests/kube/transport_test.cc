// Transport failures a real API server cannot produce on demand: nothing
// listening, a peer that accepts but never answers (a hung server), and
// one that closes its idle kept-alive connections within seconds (the
// real one waits 90 s). The peers here are plain loopback sockets or an
// httplib server, said so because they are fakes.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "switchboard/kube/client.h"
#include "switchboard/kube/event_recorder.h"
#include "switchboard/testing/net.h"
#include "switchboard/testing/temp_dir.h"
#include "switchboard/testing/test_certs.h"
#include "switchboard/testing/wait.h"

namespace switchboard::kube {
namespace {

using namespace std::chrono_literals;

// Accepts connections and never answers (a hung API server); counts them.
class SilentServer {
 public:
  SilentServer() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    EXPECT_EQ(listen(fd_, 16), 0);
    socklen_t len = sizeof(a);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      while (!stop_.load()) {
        pollfd p{fd_, POLLIN, 0};
        if (poll(&p, 1, 20) == 1) {
          int c = accept(fd_, nullptr, nullptr);
          if (c >= 0) {
            std::lock_guard<std::mutex> lock(mu_);
            conns_.push_back(c);
            accepted_.fetch_add(1);
          }
        }
      }
    });
  }
  ~SilentServer() {
    stop_ = true;
    thread_.join();
    for (int c : conns_) close(c);
    close(fd_);
  }
  int port() const { return port_; }
  int accepted() const { return accepted_.load(); }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::mutex mu_;
  std::vector<int> conns_;  // guarded by mu_
  std::thread thread_;
};

// Answers each connection with one canned HTTP response and records the
// request line. Used for what the local API server cannot show: an API
// behind a path-prefix proxy.
class CannedHttpServer {
 public:
  explicit CannedHttpServer(std::string response) : response_(std::move(response)) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    EXPECT_EQ(listen(fd_, 16), 0);
    socklen_t len = sizeof(a);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      while (!stop_.load()) {
        pollfd p{fd_, POLLIN, 0};
        if (poll(&p, 1, 20) != 1) continue;
        int c = accept(fd_, nullptr, nullptr);
        if (c < 0) continue;
        std::string req;
        char buf[4096];
        while (req.find("\r\n\r\n") == std::string::npos) {
          ssize_t n = read(c, buf, sizeof(buf));
          if (n <= 0) break;
          req.append(buf, static_cast<size_t>(n));
        }
        {
          std::lock_guard<std::mutex> lock(mu_);
          request_lines_.push_back(req.substr(0, req.find("\r\n")));
        }
        (void)!write(c, response_.data(), response_.size());
        close(c);
      }
    });
  }
  ~CannedHttpServer() {
    stop_ = true;
    thread_.join();
    close(fd_);
  }
  int port() const { return port_; }
  std::vector<std::string> request_lines() {
    std::lock_guard<std::mutex> lock(mu_);
    return request_lines_;
  }

 private:
  std::string response_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<std::string> request_lines_;  // guarded by mu_
  std::thread thread_;
};

Config PlainConfig(int port) {
  Config c;
  c.server = "http://127.0.0.1:" + std::to_string(port);
  c.connect_timeout = 1s;
  return c;
}

TEST(Transport, ConnectionRefusedIsUnavailable) {
  auto client = Client::New(PlainConfig(testing::FreePort()));
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto r = (*client)->Get(resources::Secret(), "a", "b");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
  EXPECT_NE(r.status().message().find("/api/v1/namespaces/a/secrets/b"), std::string::npos);
}

TEST(Transport, HungServerHitsThePerCallTimeout) {
  SilentServer silent;
  auto client = Client::New(PlainConfig(silent.port()));
  ASSERT_TRUE(client.ok());
  CallOptions call;
  call.timeout = 300ms;
  auto start = std::chrono::steady_clock::now();
  auto r = (*client)->Get(resources::Secret(), "a", "b", call);
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kTimeout) << r.status().ToString();
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 5s);
}

TEST(Transport, WatchCancelReturnsPromptly) {
  SilentServer silent;
  auto client = Client::New(PlainConfig(silent.port()));
  ASSERT_TRUE(client.ok());
  Cancellation cancel;
  std::thread canceller([&] {
    // Cancel once the watch is connected and blocked reading.
    EXPECT_TRUE(testing::WaitFor([&] { return silent.accepted() == 1; }, 5s));
    cancel.Cancel();
  });
  auto start = std::chrono::steady_clock::now();
  Status s = (*client)->Watch(
      resources::Secret(), "a", WatchOptions{}, [](const WatchEvent&) { return true; }, &cancel);
  canceller.join();
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(Transport, ServerPathPrefixWarningsAndStatusMapping) {
  std::string body =
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"secrets \"b\" not found","reason":"NotFound","code":404})";
  CannedHttpServer server(
      "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
      "Warning: 299 - \"first\"\r\nWarning: 299 - \"second\"\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
  Config c = PlainConfig(server.port());
  c.server += "/k8s/clusters/c-1/";
  auto client = Client::New(c);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  std::vector<std::string> warnings;
  CallOptions call;
  call.warnings = &warnings;
  auto r = (*client)->Get(resources::Secret(), "a", "b", call);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "secrets \"b\" not found");
  EXPECT_EQ(warnings, (std::vector<std::string>{"first", "second"}));
  auto lines = server.request_lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "GET /k8s/clusters/c-1/api/v1/namespaces/a/secrets/b HTTP/1.1");
}

// A kept-alive connection idle past idle_connection_timeout is not used
// again: a create (a POST, never retried) after the server closed the
// connection while it was idle goes out on a new one and succeeds. Over
// TLS, as to an API server: the server's close_notify is data on the
// socket, so the HTTP library's own check (is the peer's end closed?)
// takes the dead connection for a live one.
TEST(Transport, IdleConnectionsPastTheirTimeoutAreNotReused) {
  testing::TempDir dir;
  const testing::TestCerts certs = testing::MakeCerts(dir.path());
  ASSERT_FALSE(certs.cert.empty());
  httplib::SSLServer server(certs.cert.c_str(), certs.key.c_str());
  ASSERT_TRUE(server.is_valid());
  server.set_keep_alive_timeout(2);  // seconds
  std::mutex mu;
  std::vector<int> ports;  // each request's client port; guarded by mu
  server.Post("/api/v1/namespaces/a/secrets",
              [&](const httplib::Request& req, httplib::Response& res) {
                {
                  std::lock_guard<std::mutex> lock(mu);
                  ports.push_back(req.remote_port);
                }
                res.status = 201;
                res.set_content(req.body, "application/json");
              });
  const int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread serving([&] { server.listen_after_bind(); });
  if (!testing::WaitFor([&] { return server.is_running(); }, 5s, 10ms)) {
    server.stop();
    serving.join();
    FAIL() << "the httplib server did not start";
  }

  Config c;
  c.server = "https://127.0.0.1:" + std::to_string(port);
  c.ca_pem = certs.ca_pem;
  c.connect_timeout = 2s;
  c.idle_connection_timeout = 1s;  // a second call made at once is within it
  auto client = Client::New(c);
  auto create = [&]() -> Result<nlohmann::json> {
    if (!client.ok()) return client.status();
    const nlohmann::json secret = {{"apiVersion", "v1"},
                                   {"kind", "Secret"},
                                   {"metadata", {{"name", "s"}, {"namespace", "a"}}}};
    return (*client)->Create(resources::Secret(), secret);
  };
  auto first = create();
  auto second = create();  // at once: the same connection
  // Past the server's keep-alive timeout, so past the client's idle one.
  const auto until = std::chrono::steady_clock::now() + 2500ms;
  testing::WaitFor([&] { return std::chrono::steady_clock::now() >= until; }, 5s, 50ms);
  auto third = create();
  server.stop();
  serving.join();

  ASSERT_TRUE(client.ok()) << client.status().ToString();
  EXPECT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_TRUE(third.ok()) << third.status().ToString();
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(ports.size(), 3u);
  EXPECT_EQ(ports[0], ports[1]) << "a connection used at once is kept alive";
  EXPECT_NE(ports[1], ports[2]) << "an idle connection past its timeout was used again";
}

TEST(Transport, BadTlsMaterialIsRejectedUpFront) {
  Config c;
  c.server = "https://127.0.0.1:1";
  c.ca_pem = "not a certificate";
  auto r = Client::New(c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("certificate-authority"), std::string::npos);
  c.ca_pem.clear();
  c.client_cert_pem = "junk";
  c.client_key_pem = "junk";
  r = Client::New(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("client-certificate"), std::string::npos);
  c.client_cert_pem.clear();
  c.server = "ftp://x";
  EXPECT_FALSE(Client::New(c).ok());
}

TEST(EventRecorder, RecordNeverBlocksWhenTheServerIsDown) {
  auto client = Client::New(PlainConfig(testing::FreePort()));
  ASSERT_TRUE(client.ok());
  EventRecorder::Options o;
  o.queue_capacity = 10;
  o.call_timeout = 200ms;
  EventRecorder rec(client->get(), o);
  json obj = {
      {"apiVersion", "v1"}, {"kind", "Secret"}, {"metadata", {{"name", "s"}, {"namespace", "a"}}}};
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 1000; ++i) rec.Record(obj, EventType::kWarning, "Test", "m");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  EXPECT_GT(rec.dropped(), 0u);
}

TEST(EventRecorder, BuildEventShape) {
  json obj = {{"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
              {"kind", "PubSubBackend"},
              {"metadata", {{"name", "b"}, {"namespace", "a"}, {"uid", "u"}}}};
  EventRecorder::Options o;
  o.component = "switchboard-operator";
  o.instance = "pod-1";
  auto when = std::chrono::system_clock::from_time_t(1764495000);  // 2025-11-30T09:30:00Z
  json ev = EventRecorder::BuildEvent(obj, EventType::kWarning, "ConfigInvalid",
                                      std::string(2000, 'x'), o, when, "b.1");
  EXPECT_EQ(ev["metadata"]["namespace"], "a");
  EXPECT_EQ(ev["metadata"]["name"], "b.1");
  EXPECT_EQ(ev["involvedObject"]["kind"], "PubSubBackend");
  EXPECT_EQ(ev["involvedObject"]["uid"], "u");
  EXPECT_EQ(ev["type"], "Warning");
  EXPECT_EQ(ev["reason"], "ConfigInvalid");
  EXPECT_EQ(ev["message"].get<std::string>().size(), 1024u);
  EXPECT_EQ(ev["source"]["component"], "switchboard-operator");
  EXPECT_EQ(ev["firstTimestamp"], "2025-11-30T09:30:00Z");
  EXPECT_EQ(ev["count"], 1);
  json cluster_scoped = {
      {"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "n"}}}};
  EXPECT_EQ(EventRecorder::BuildEvent(cluster_scoped, EventType::kNormal, "R", "m", o, when,
                                      "n.1")["metadata"]["namespace"],
            "default");
}

}  // namespace
}  // namespace switchboard::kube
