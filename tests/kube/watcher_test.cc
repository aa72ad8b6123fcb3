// The watcher's state machine with a scripted transport. A fake is used
// because the faults under test (410 Gone after etcd compaction, a stream
// ending at a chosen moment) cannot be produced on demand by the real API
// server within a unit test's time; the e2e tests cover the real thing.
#include "switchboard/kube/watcher.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <mutex>

#include "switchboard/testing/wait.h"

namespace switchboard::kube {
namespace {

using namespace std::chrono_literals;
using switchboard::testing::WaitFor;

json Cm(const std::string& name, const std::string& rv) {
  return {{"metadata", {{"name", name}, {"namespace", "ns"}, {"resourceVersion", rv}}}};
}

std::string ListBody(std::vector<json> items, const std::string& rv) {
  return json{{"kind", "ConfigMapList"},
              {"apiVersion", "v1"},
              {"metadata", {{"resourceVersion", rv}}},
              {"items", items}}
      .dump();
}

std::string Line(const std::string& type, const json& obj) {
  return json{{"type", type}, {"object", obj}}.dump() + "\n";
}

class ScriptedTransport : public Transport {
 public:
  struct StreamScript {
    std::string data;  // sent in one chunk
    bool block_until_cancel = false;
  };

  std::deque<Result<HttpResponse>> lists;  // answers to Send, in order
  std::deque<StreamScript> streams;        // answers to Stream, in order

  Result<HttpResponse> Send(const HttpRequest& req, std::chrono::milliseconds) override {
    std::lock_guard<std::mutex> lock(mu_);
    paths_.push_back(req.path);
    if (lists.empty()) return Status::Unavailable("script exhausted");
    auto r = lists.front();
    lists.pop_front();
    return r;
  }

  Result<HttpResponse> Stream(const HttpRequest& req,
                              const std::function<bool(std::string_view)>& on_data,
                              std::chrono::milliseconds, Cancellation* cancel) override {
    StreamScript s;
    {
      std::lock_guard<std::mutex> lock(mu_);
      paths_.push_back(req.path);
      if (streams.empty()) {
        s.block_until_cancel = true;
      } else {
        s = streams.front();
        streams.pop_front();
      }
    }
    if (!s.data.empty()) on_data(s.data);
    if (s.block_until_cancel) {
      std::unique_lock<std::mutex> lock(mu_);
      cancel->SetHook([this] {
        std::lock_guard<std::mutex> l(cancel_mu_);
        cancelled_ = true;
        cv_.notify_all();
      });
      lock.unlock();
      std::unique_lock<std::mutex> cl(cancel_mu_);
      cv_.wait(cl, [this] { return cancelled_; });
      cl.unlock();
      cancel->ClearHook();
    }
    return HttpResponse{200, "", {}};
  }

  std::vector<std::string> paths() {
    std::lock_guard<std::mutex> lock(mu_);
    return paths_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> paths_;  // guarded by mu_
  std::mutex cancel_mu_;
  std::condition_variable cv_;
  bool cancelled_ = false;  // guarded by cancel_mu_
};

struct Harness {
  ScriptedTransport* transport;
  std::unique_ptr<Client> client;
  Harness() {
    auto t = std::make_unique<ScriptedTransport>();
    transport = t.get();
    Config c;
    c.server = "http://127.0.0.1:1";
    client = std::make_unique<Client>(c, std::move(t));
  }
};

WatcherOptions FastOptions() {
  WatcherOptions o;
  o.initial_backoff = 1ms;
  o.max_backoff = 5ms;
  return o;
}

TEST(Watcher, RelistsOnGoneAndStoreFollows) {
  Harness h;
  h.transport->lists.push_back(HttpResponse{200, ListBody({Cm("a", "5")}, "10"), {}});
  h.transport->streams.push_back(
      {Line("ERROR",
            {{"kind", "Status"}, {"code", 410}, {"reason", "Expired"}, {"message", "too old"}}),
       false});
  h.transport->lists.push_back(HttpResponse{200, ListBody({Cm("b", "18")}, "20"), {}});
  h.transport->streams.push_back({Line("ADDED", Cm("c", "21")), true});

  Informer inf(h.client.get(), resources::ConfigMap(), "ns", FastOptions());
  std::atomic<int> errors{0};
  inf.OnError([&](const Status&) { errors.fetch_add(1); });
  inf.Start();
  ASSERT_TRUE(WaitFor([&] { return inf.store().Size() == 2 && inf.store().Get("ns/c"); }, 5s));
  EXPECT_EQ(inf.store().Keys(), (std::vector<std::string>{"ns/b", "ns/c"}));
  EXPECT_EQ(inf.watcher().lists(), 2);
  EXPECT_EQ(errors.load(), 0) << "410 is a relist, not an error";
  EXPECT_EQ(inf.watcher().last_resource_version(), "21");
  inf.Stop();
  auto paths = h.transport->paths();
  ASSERT_EQ(paths.size(), 4u);
  EXPECT_NE(paths[1].find("resourceVersion=10"), std::string::npos) << paths[1];
  EXPECT_NE(paths[3].find("resourceVersion=20"), std::string::npos) << paths[3];
  EXPECT_NE(paths[1].find("allowWatchBookmarks=true"), std::string::npos);
}

// The same with parse_keep (the authorizer's caches): a masked parse must
// not mask the ERROR's Status, or the 410 reads as a plain failure and the
// watcher retries the expired version forever instead of relisting.
TEST(Watcher, RelistsOnGoneWhenParsingMasked) {
  Harness h;
  h.transport->lists.push_back(HttpResponse{200, ListBody({Cm("a", "5")}, "10"), {}});
  h.transport->streams.push_back(
      {Line("ERROR",
            {{"kind", "Status"}, {"code", 410}, {"reason", "Expired"}, {"message", "too old"}}),
       false});
  h.transport->lists.push_back(HttpResponse{200, ListBody({Cm("b", "18")}, "20"), {}});
  h.transport->streams.push_back({Line("ADDED", Cm("c", "21")), true});
  WatcherOptions o = FastOptions();
  o.parse_keep = FieldMask::Keep({{"metadata"}});
  Informer inf(h.client.get(), resources::ConfigMap(), "ns", o);
  std::atomic<int> errors{0};
  inf.OnError([&](const Status&) { errors.fetch_add(1); });
  inf.Start();
  ASSERT_TRUE(WaitFor([&] { return inf.store().Size() == 2 && inf.store().Get("ns/c"); }, 5s));
  EXPECT_EQ(inf.store().Keys(), (std::vector<std::string>{"ns/b", "ns/c"}));
  EXPECT_EQ(inf.watcher().lists(), 2);
  EXPECT_EQ(errors.load(), 0) << "410 is a relist, not an error";
  inf.Stop();
}

TEST(Watcher, TransformShapesWhatTheStoreHolds) {
  Harness h;
  json big = Cm("a", "5");
  big["data"] = {{"keep", "1"}, {"drop", std::string(1000, 'x')}};
  h.transport->lists.push_back(HttpResponse{200, ListBody({big}, "10"), {}});
  json changed = Cm("a", "11");
  changed["data"] = {{"keep", "2"}, {"drop", "y"}};
  h.transport->streams.push_back({Line("MODIFIED", changed), true});
  WatcherOptions o = FastOptions();
  o.transform = [](json& obj) { obj["data"].erase("drop"); };
  Informer inf(h.client.get(), resources::ConfigMap(), "ns", o);
  std::atomic<bool> listed_whole{true};
  inf.store().AddEventHandler(
      {[&](const ObjectPtr& obj) { listed_whole = (*obj)["data"].contains("drop"); }, {}, {}});
  inf.Start();
  ASSERT_TRUE(WaitFor(
      [&] {
        auto a = inf.store().Get("ns/a");
        return a && (*a)["metadata"]["resourceVersion"] == "11";
      },
      5s));
  EXPECT_FALSE(listed_whole.load()) << "the listed object reached the store untransformed";
  EXPECT_EQ((*inf.store().Get("ns/a"))["data"], (json{{"keep", "2"}}));
  EXPECT_EQ(inf.watcher().lists(), 1);
  inf.Stop();
}

// stream_list: a listed object reaches the handler as a kApplied event
// (transformed) as its page arrives, and the list's end is a kRestarted
// carrying only the listed keys; watched events follow as usual.
TEST(Watcher, StreamListHandsOnEachListedObject) {
  Harness h;
  json big = Cm("a", "5");
  big["data"] = {{"keep", "1"}, {"drop", "x"}};
  h.transport->lists.push_back(HttpResponse{200, ListBody({big, Cm("b", "6")}, "10"), {}});
  h.transport->streams.push_back({Line("DELETED", Cm("b", "12")), true});
  WatcherOptions o = FastOptions();
  o.transform = [](json& obj) {
    if (obj.contains("data")) obj["data"].erase("drop");
  };
  o.stream_list = true;
  std::mutex mu;
  std::vector<std::string> seen;  // guarded by mu
  Watcher w(h.client.get(), resources::ConfigMap(), "ns", o, [&](WatcherEvent& ev) {
    std::lock_guard lock(mu);
    switch (ev.type) {
      case WatcherEvent::Type::kApplied:
        seen.push_back("applied " + ObjectKeyOf(ev.object) + " " + ev.object["data"].dump());
        break;
      case WatcherEvent::Type::kRestarted: {
        std::string keys;
        for (const auto& k : ev.listed) keys += " " + k;
        seen.push_back("listed" + keys + " objects " + std::to_string(ev.objects.size()));
        break;
      }
      case WatcherEvent::Type::kDeleted:
        seen.push_back("deleted " + ObjectKeyOf(ev.object));
        break;
      case WatcherEvent::Type::kError:
        seen.push_back("error");
        break;
    }
  });
  w.Start();
  ASSERT_TRUE(WaitFor(
      [&] {
        std::lock_guard lock(mu);
        return seen.size() >= 4;
      },
      5s));
  w.Stop();
  std::lock_guard lock(mu);
  EXPECT_EQ(seen, (std::vector<std::string>{R"(applied ns/a {"keep":"1"})", "applied ns/b null",
                                            "listed ns/a ns/b objects 0", "deleted ns/b"}));
}

TEST(Watcher, ResumesFromLastVersionAfterCleanEnd) {
  Harness h;
  h.transport->lists.push_back(HttpResponse{200, ListBody({}, "10"), {}});
  // First watch: an object, a bookmark, then the server ends the stream.
  h.transport->streams.push_back(
      {Line("ADDED", Cm("x", "11")) + Line("BOOKMARK", {{"metadata", {{"resourceVersion", "15"}}}}),
       false});
  h.transport->streams.push_back({Line("DELETED", Cm("x", "16")), true});
  Informer inf(h.client.get(), resources::ConfigMap(), "ns", FastOptions());
  inf.Start();
  ASSERT_TRUE(WaitFor([&] { return inf.watcher().last_resource_version() == "16"; }, 5s));
  EXPECT_EQ(inf.store().Size(), 0u);
  EXPECT_EQ(inf.watcher().lists(), 1) << "a clean end resumes without relisting";
  inf.Stop();
  auto paths = h.transport->paths();
  ASSERT_EQ(paths.size(), 3u);
  EXPECT_NE(paths[2].find("resourceVersion=15"), std::string::npos) << "bookmark advanced it";
}

TEST(Watcher, ErrorsAreEventsAndRetriedWithBackoff) {
  Harness h;
  h.transport->lists.push_back(Status::Unavailable("connection refused"));
  h.transport->lists.push_back(HttpResponse{
      403,
      json{{"kind", "Status"}, {"reason", "Forbidden"}, {"message", "no"}, {"code", 403}}.dump(),
      {}});
  h.transport->lists.push_back(HttpResponse{200, ListBody({Cm("a", "1")}, "2"), {}});
  std::mutex mu;
  std::vector<std::string> events;  // guarded by mu
  Watcher w(h.client.get(), resources::ConfigMap(), "ns", FastOptions(),
            [&](const WatcherEvent& ev) {
              std::lock_guard<std::mutex> lock(mu);
              switch (ev.type) {
                case WatcherEvent::Type::kError:
                  events.push_back("error " + std::string(StatusCodeName(ev.error.code())));
                  break;
                case WatcherEvent::Type::kRestarted:
                  events.push_back("restarted " + std::to_string(ev.objects.size()));
                  EXPECT_EQ(ev.objects[0]["kind"], "ConfigMap");
                  EXPECT_EQ(ev.objects[0]["apiVersion"], "v1");
                  break;
                default:
                  events.push_back("other");
              }
            });
  EXPECT_EQ(w.state(), WatcherState::kEmpty);
  w.Start();
  ASSERT_TRUE(WaitFor([&] { return w.state() == WatcherState::kWatching; }, 5s));
  w.Stop();
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(events, (std::vector<std::string>{"error Unavailable", "error PermissionDenied",
                                              "restarted 1"}));
}

TEST(Watcher, StopWithoutStartAndTwice) {
  Harness h;
  Watcher w(h.client.get(), resources::ConfigMap(), "ns", FastOptions(),
            [](const WatcherEvent&) {});
  w.Stop();
  w.Stop();
  EXPECT_EQ(WatcherStateName(w.state()), "Empty");
}

}  // namespace
}  // namespace switchboard::kube
