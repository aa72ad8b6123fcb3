// Informer (watcher + store) against the real API server: initial sync,
// handlers for add/update/delete, selectors, prompt Stop().
#include <gtest/gtest.h>

#include <mutex>

#include "kube_e2e.h"
#include "switchboard/kube/watcher.h"
#include "switchboard/testing/wait.h"

namespace switchboard::kube::e2e {
namespace {

using namespace std::chrono_literals;
using switchboard::testing::WaitFor;

class InformerE2E : public KubeTest {};

TEST_F(InformerE2E, SyncsAndTracksChanges) {
  for (const char* n : {"x1", "x2", "x3"}) {
    ASSERT_TRUE(
        client_->Create(resources::ConfigMap(), ConfigMap(n, {{"v", "1"}}, {{"sel", "in"}})).ok());
  }
  ASSERT_TRUE(client_->Create(resources::ConfigMap(), ConfigMap("out", {}, {{"sel", "out"}})).ok());

  WatcherOptions wo;
  wo.label_selector = "sel=in";
  wo.page_size = 2;  // the initial list pages
  Informer inf(client_.get(), resources::ConfigMap(), ns_, wo);
  std::mutex mu;
  std::vector<std::string> log;  // guarded by mu
  auto note = [&](const std::string& s) {
    std::lock_guard<std::mutex> lock(mu);
    log.push_back(s);
  };
  inf.store().AddEventHandler({[&](const ObjectPtr& o) { note("add " + NameOf(*o)); },
                               [&](const ObjectPtr&, const ObjectPtr& o) {
                                 note("update " + NameOf(*o) + " " + (*o)["data"].value("v", ""));
                               },
                               [&](const ObjectPtr& o) { note("delete " + NameOf(*o)); }});
  EXPECT_FALSE(inf.store().HasSynced());
  inf.Start();
  ASSERT_TRUE(inf.store().WaitForSync(10s));
  EXPECT_EQ(inf.store().Size(), 3u);
  auto x1 = inf.store().Get(ns_, "x1");
  ASSERT_NE(x1, nullptr);
  EXPECT_EQ((*x1)["kind"], "ConfigMap") << "list items get apiVersion/kind filled in";
  EXPECT_FALSE((*x1)["metadata"].contains("managedFields"))
      << "the cache drops server bookkeeping no controller reads";

  ASSERT_TRUE(
      client_->Patch(resources::ConfigMap(), ns_, "x2", PatchType::kMerge, {{"data", {{"v", "2"}}}})
          .ok());
  ASSERT_TRUE(client_->Delete(resources::ConfigMap(), ns_, "x3").ok());
  ASSERT_TRUE(client_->Create(resources::ConfigMap(), ConfigMap("x4", {}, {{"sel", "in"}})).ok());
  ASSERT_TRUE(WaitFor([&] { return inf.store().Size() == 3 && inf.store().Get(ns_, "x4"); }, 10s));
  EXPECT_EQ((*inf.store().Get(ns_, "x2"))["data"]["v"], "2");
  EXPECT_FALSE((*inf.store().Get(ns_, "x2"))["metadata"].contains("managedFields"))
      << "watch events are trimmed too";
  EXPECT_EQ(inf.store().Get(ns_, "x3"), nullptr);
  EXPECT_EQ(inf.store().Get(ns_, "out"), nullptr) << "label selector applies";
  // The store calls its handlers after it has changed (outside its lock), so
  // x4 can be in the store a moment before "add x4" is in the log.
  EXPECT_TRUE(WaitFor(
      [&] {
        std::lock_guard<std::mutex> lock(mu);
        return log.size() >= 6;
      },
      10s));
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(log, (std::vector<std::string>{"add x1", "add x2", "add x3", "update x2 2",
                                             "delete x3", "add x4"}));
  }
  EXPECT_EQ(inf.watcher().state(), WatcherState::kWatching);
  EXPECT_EQ(inf.watcher().lists(), 1);
  auto start = std::chrono::steady_clock::now();
  inf.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}

TEST_F(InformerE2E, ForbiddenIsReportedAndRetriedNotFatal) {
  // A client whose token may not list: errors arrive as events, the watcher
  // keeps trying, and the store never claims to be synced.
  json sa = {{"apiVersion", "v1"},
             {"kind", "ServiceAccount"},
             {"metadata", {{"name", "bare"}, {"namespace", ns_}}}};
  ASSERT_TRUE(client_->Create(resources::ServiceAccount(), sa).ok());
  auto tok = client_->CreateSubresource(resources::ServiceAccount(), ns_, "bare", "token",
                                        {{"apiVersion", "authentication.k8s.io/v1"},
                                         {"kind", "TokenRequest"},
                                         {"spec", {{"expirationSeconds", 600}}}});
  ASSERT_TRUE(tok.ok());
  Config c = config_;
  c.client_cert_pem.clear();
  c.client_key_pem.clear();
  c.bearer_token = (*tok)["status"]["token"];
  auto limited = Client::New(c);
  ASSERT_TRUE(limited.ok());
  WatcherOptions wo;
  wo.initial_backoff = 20ms;
  wo.max_backoff = 50ms;
  Informer inf(limited->get(), resources::Secret(), ns_, wo);
  std::mutex mu;
  std::vector<StatusCode> codes;
  inf.OnError([&](const Status& s) {
    std::lock_guard<std::mutex> lock(mu);
    codes.push_back(s.code());
  });
  inf.Start();
  ASSERT_TRUE(WaitFor(
      [&] {
        std::lock_guard<std::mutex> lock(mu);
        return codes.size() >= 3;
      },
      10s));
  inf.Stop();
  EXPECT_FALSE(inf.store().HasSynced());
  std::lock_guard<std::mutex> lock(mu);
  for (auto code : codes) EXPECT_EQ(code, StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace switchboard::kube::e2e
