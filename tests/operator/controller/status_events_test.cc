// WriteStatusAndAnnounce: a transition is announced by the write that
// stored it, and a write from a version the API server no longer has (a
// reconcile that read a lagging cache) is refused and announces nothing.
// A local HTTP server stands in for the API server: it answers the status
// PATCH as kube-apiserver does (409 Conflict when the patch's
// metadata.resourceVersion is not the stored one) and counts Events; a
// lagging informer cache cannot be produced on demand against a real one
// (operator_ceiling_e2e_test met it by chance under load).
#include "status_events.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "switchboard/kube/client.h"
#include "switchboard/kube/event_recorder.h"
#include "switchboard/testing/objects.h"
#include "switchboard/testing/wait.h"

namespace switchboard::operator_controller {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
namespace logic = ::switchboard::operator_logic;

class FakeApiServer {
 public:
  FakeApiServer() {
    server_.Post(R"(/api/v1/namespaces/([^/]+)/events)",
                 [this](const httplib::Request& req, httplib::Response& res) {
                   ++events_;
                   res.status = 201;
                   res.set_content(req.body, "application/json");
                 });
    server_.Patch(R"(/api/v1/namespaces/([^/]+)/events/([^/]+))",
                  [this](const httplib::Request& req, httplib::Response& res) {
                    ++events_;
                    res.set_content(req.body, "application/json");
                  });
    server_.Patch(R"(/apis/pubsub.switchboard.dev/v1alpha1/namespaces/a/pubsubbackends/b/status)",
                  [this](const httplib::Request& req, httplib::Response& res) {
                    const json patch = json::parse(req.body, nullptr, false);
                    std::lock_guard lock(mu_);
                    last_patch_ = patch;
                    const std::string rv = patch.is_object() && patch.contains("metadata")
                                               ? patch["metadata"].value("resourceVersion", "")
                                               : "";
                    if (rv != std::to_string(version_)) {
                      res.status = 409;
                      res.set_content(json{{"kind", "Status"},
                                           {"apiVersion", "v1"},
                                           {"status", "Failure"},
                                           {"reason", "Conflict"},
                                           {"code", 409},
                                           {"message", "the object has been modified"}}
                                          .dump(),
                                      "application/json");
                      return;
                    }
                    ++version_;
                    json obj = Backend(std::to_string(version_));
                    obj["status"] = patch["status"];
                    res.set_content(obj.dump(), "application/json");
                  });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // stop() before the listen loop has begun is lost, and the join would
    // then wait forever: a test that sends nothing ends that quickly.
    EXPECT_TRUE(testing::WaitFor([this] { return server_.is_running(); }, 10s));
  }
  ~FakeApiServer() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  int events() const { return events_; }
  int version() {
    std::lock_guard lock(mu_);
    return version_;
  }
  json last_patch() {
    std::lock_guard lock(mu_);
    return last_patch_;
  }

  static json Backend(const std::string& rv) {
    return testing::BackendBuilder("a", "b").Uid("u-1").ResourceVersion(rv);
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> events_{0};
  std::mutex mu_;
  int version_ = 100;  // the stored object's resourceVersion
  json last_patch_;
};

json Backend(const std::string& rv) { return FakeApiServer::Backend(rv); }

json FullStatus() {
  return {{"conditions",
           json::array({{{"type", "Ready"}, {"status", "False"}, {"reason", "ConfigFull"}}})}};
}

logic::StatusEvent Full() { return {true, "ConfigFull", "left out: the file is full"}; }

struct Fixture {
  FakeApiServer api;
  std::unique_ptr<kube::Client> client;
  std::unique_ptr<kube::EventRecorder> recorder;
  ReconcileContext ctx;
  Fixture() {
    kube::Config c;
    c.server = "http://127.0.0.1:" + std::to_string(api.port());
    auto made = kube::Client::New(c);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    client = std::move(*made);
    ctx.client = client.get();
    kube::EventRecorder::Options o;
    o.aggregation_window = 0ms;  // every Record is a write of its own
    recorder = std::make_unique<kube::EventRecorder>(client.get(), o);
    ctx.recorder = recorder.get();
  }
  int Events() {
    EXPECT_TRUE(recorder->Flush(10s));
    return api.events();
  }
  Status Write(const json& obj, const json& status,
               std::vector<std::optional<logic::StatusEvent>> events) {
    return WriteStatusAndAnnounce(ctx, kube::resources::PubSubBackend(), obj,
                                  kube::ResourceVersionOf(obj), status, events);
  }
};

TEST(WriteStatusAndAnnounce, TheWriteThatStoresATransitionAnnouncesIt) {
  Fixture f;
  ASSERT_TRUE(f.Write(Backend("100"), FullStatus(), {Full()}).ok());
  EXPECT_EQ(f.api.version(), 101);
  EXPECT_EQ(f.api.last_patch()["metadata"]["resourceVersion"], "100");
  EXPECT_EQ(f.api.last_patch()["status"], FullStatus());
  EXPECT_EQ(f.Events(), 1);
}

TEST(WriteStatusAndAnnounce, AStaleVersionIsRefusedAndAnnouncesNothing) {
  Fixture f;
  ASSERT_TRUE(f.Write(Backend("100"), FullStatus(), {Full()}).ok());
  // A second reconcile read version 100 from a cache that has not seen the
  // write above: the same transition again, from the same old status.
  Status again = f.Write(Backend("100"), FullStatus(), {Full()});
  EXPECT_EQ(again.code(), StatusCode::kConflict) << again.ToString();
  EXPECT_EQ(f.api.version(), 101);
  EXPECT_EQ(f.Events(), 1);
}

TEST(WriteStatusAndAnnounce, AnUnchangedStatusWritesAndAnnouncesNothing) {
  Fixture f;
  json obj = Backend("100");
  obj["status"] = FullStatus();
  ASSERT_TRUE(f.Write(obj, FullStatus(), {Full()}).ok());
  EXPECT_EQ(f.api.version(), 100);
  EXPECT_EQ(f.Events(), 0);
}

TEST(WriteStatusAndAnnounce, EveryEventOfAStoredWriteIsAnnouncedAndAbsentOnesSkipped) {
  Fixture f;
  logic::StatusEvent fits{true, "ConfigDoesNotFit", "12 newer one(s) are left out"};
  ASSERT_TRUE(f.Write(Backend("100"), FullStatus(), {Full(), std::nullopt, fits}).ok());
  EXPECT_EQ(f.Events(), 2);
}

TEST(WriteStatusAndAnnounce, AMemberTheNewStatusLacksIsNulled) {
  Fixture f;
  json obj = Backend("100");
  obj["status"] = {{"envSecretName", "e"}, {"conditions", json::array()}};
  ASSERT_TRUE(f.Write(obj, FullStatus(), {}).ok());
  EXPECT_TRUE(f.api.last_patch()["status"]["envSecretName"].is_null());
}

}  // namespace
}  // namespace switchboard::operator_controller
