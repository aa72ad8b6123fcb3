// Transport failures a real API server cannot produce on demand: nothing
// listening, and a peer that accepts but never answers (a hung server). The
// peers here are plain loopback sockets, said so because they are fakes.
#include <arpa/inet.h>
#include <gtest/gtest.h>
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
