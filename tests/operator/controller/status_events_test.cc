// AnnounceStatusEvents: one transition seen twice from the same version of
// an object (a reconcile that ran before the cache had its own status
// write) is one event; the same transition from a newer version is a new
// one. The Events go to a local HTTP server standing in for the API server
// (a stale cache cannot be produced on demand against a real one: the
// ceiling e2e test hit it by chance under load).
#include "status_events.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <thread>

#include "secret_io.h"
#include "switchboard/kube/client.h"
#include "switchboard/kube/event_recorder.h"

namespace switchboard::operator_controller {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
namespace logic = ::switchboard::operator_logic;

class EventSink {
 public:
  EventSink() {
    server_.Post(R"(/api/v1/namespaces/([^/]+)/events)",
                 [this](const httplib::Request& req, httplib::Response& res) {
                   ++writes_;
                   res.status = 201;
                   res.set_content(req.body, "application/json");
                 });
    server_.Patch(R"(/api/v1/namespaces/([^/]+)/events/([^/]+))",
                  [this](const httplib::Request& req, httplib::Response& res) {
                    ++writes_;
                    res.set_content(req.body, "application/json");
                  });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~EventSink() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  int writes() const { return writes_; }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> writes_{0};
};

json Backend(const std::string& rv) {
  return {
      {"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
      {"kind", "PubSubBackend"},
      {"metadata", {{"name", "b"}, {"namespace", "a"}, {"uid", "u-1"}, {"resourceVersion", rv}}}};
}

logic::StatusEvent Full() { return {true, "ConfigFull", "left out: the file is full"}; }

struct Fixture {
  EventSink sink;
  std::unique_ptr<kube::Client> client;
  std::unique_ptr<kube::EventRecorder> recorder;
  RecentWrites recent;
  ReconcileContext ctx;
  Fixture() {
    kube::Config c;
    c.server = "http://127.0.0.1:" + std::to_string(sink.port());
    auto made = kube::Client::New(c);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    client = std::move(*made);
    kube::EventRecorder::Options o;
    o.aggregation_window = 0ms;  // every Record is a write of its own
    recorder = std::make_unique<kube::EventRecorder>(client.get(), o);
    ctx.recorder = recorder.get();
    ctx.recent = &recent;
  }
  int Written() {
    EXPECT_TRUE(recorder->Flush(10s));
    return sink.writes();
  }
};

TEST(AnnounceStatusEvents, OneTransitionSeenTwiceFromOneVersionIsOneEvent) {
  Fixture f;
  AnnounceStatusEvents(f.ctx, Backend("100"), {Full()});
  AnnounceStatusEvents(f.ctx, Backend("100"), {Full()});
  EXPECT_EQ(f.Written(), 1);
}

TEST(AnnounceStatusEvents, TheSameTransitionFromANewerVersionIsAnnouncedAgain) {
  Fixture f;
  AnnounceStatusEvents(f.ctx, Backend("100"), {Full()});
  AnnounceStatusEvents(f.ctx, Backend("105"), {Full()});
  EXPECT_EQ(f.Written(), 2);
}

TEST(AnnounceStatusEvents, EachEventOfOneVersionIsAnnouncedAndAbsentOnesAreSkipped) {
  Fixture f;
  logic::StatusEvent fits{true, "ConfigDoesNotFit", "12 newer one(s) are left out"};
  AnnounceStatusEvents(f.ctx, Backend("7"), {Full(), std::nullopt, fits});
  AnnounceStatusEvents(f.ctx, Backend("7"), {fits});
  EXPECT_EQ(f.Written(), 2);
}

TEST(AnnounceStatusEvents, WithoutRecentWritesEveryCallAnnounces) {
  Fixture f;
  f.ctx.recent = nullptr;
  AnnounceStatusEvents(f.ctx, Backend("100"), {Full()});
  AnnounceStatusEvents(f.ctx, Backend("100"), {Full()});
  EXPECT_EQ(f.Written(), 2);
}

}  // namespace
}  // namespace switchboard::operator_controller
