// The watcher survives a kube-apiserver restart (scripts/cluster.sh
// restart-apiserver: etcd keeps the data, the API server comes back on the
// same port) and its store ends with the server's true final state.
// Registered RUN_SERIAL: the restart affects every client of the cluster.
#include <gtest/gtest.h>

#include <atomic>

#include "kube_e2e.h"
#include "switchboard/kube/watcher.h"
#include "switchboard/testing/process.h"
#include "switchboard/testing/wait.h"

namespace switchboard::kube::e2e {
namespace {

using namespace std::chrono_literals;
using switchboard::testing::WaitFor;

class WatcherRestartE2E : public KubeTest {};

// Retries a write while the API server finishes coming back.
template <class F>
Result<json> Eventually(F f) {
  Result<json> r = Status::Unavailable("not tried");
  WaitFor(
      [&] {
        r = f();
        return r.ok() || (r.status().code() != StatusCode::kUnavailable &&
                          r.status().code() != StatusCode::kTimeout);
      },
      30s, 100ms);
  return r;
}

TEST_F(WatcherRestartE2E, StoreConvergesAfterApiServerRestart) {
  const char* cluster_dir = std::getenv("SWITCHBOARD_CLUSTER_DIR");
  const char* src = std::getenv("SWITCHBOARD_SOURCE_DIR");
  ASSERT_NE(cluster_dir, nullptr);
  ASSERT_NE(src, nullptr);

  ASSERT_TRUE(client_->Create(resources::ConfigMap(), ConfigMap("a", {{"v", "1"}})).ok());
  ASSERT_TRUE(client_->Create(resources::ConfigMap(), ConfigMap("b", {{"v", "1"}})).ok());

  WatcherOptions wo;
  wo.initial_backoff = 100ms;
  wo.max_backoff = 1s;
  Informer inf(client_.get(), resources::ConfigMap(), ns_, wo);
  std::atomic<int> errors{0};
  inf.OnError([&](const Status&) { errors.fetch_add(1); });
  inf.Start();
  ASSERT_TRUE(inf.store().WaitForSync(10s));
  EXPECT_EQ(inf.store().Keys(), (std::vector<std::string>{ns_ + "/a", ns_ + "/b"}));

  auto restart_start = std::chrono::steady_clock::now();
  auto restart = switchboard::testing::Run(
      {"bash", std::string(src) + "/scripts/cluster.sh", "restart-apiserver"},
      {{"CLUSTER_DIR", cluster_dir}}, "", 180s);
  ASSERT_EQ(restart.exit_code, 0) << restart.out << restart.err;
  std::cout << "restart-apiserver took "
            << std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - restart_start)
                   .count()
            << " ms\n";

  // Changes after the restart: the watcher must pick them up, by resuming
  // or by relisting.
  ASSERT_TRUE(Eventually([&] {
                return client_->Patch(resources::ConfigMap(), ns_, "a", PatchType::kMerge,
                                      {{"data", {{"v", "2"}}}});
              }).ok());
  ASSERT_TRUE(Eventually([&] { return client_->Delete(resources::ConfigMap(), ns_, "b"); }).ok());
  ASSERT_TRUE(Eventually([&] {
                return client_->Create(resources::ConfigMap(), ConfigMap("c", {{"v", "1"}}));
              }).ok());

  auto truth = client_->ListAll(resources::ConfigMap(), ns_);
  ASSERT_TRUE(truth.ok());
  std::map<std::string, std::string> want;  // key -> resourceVersion
  for (const auto& item : (*truth)["items"]) want[ObjectKeyOf(item)] = ResourceVersionOf(item);
  ASSERT_EQ(want.size(), 2u);

  auto store_state = [&] {
    std::map<std::string, std::string> got;
    for (const auto& o : inf.store().List()) got[ObjectKeyOf(*o)] = ResourceVersionOf(*o);
    return got;
  };
  EXPECT_TRUE(WaitFor([&] { return store_state() == want; }, 30s))
      << "store does not match the server after the restart";
  auto a = inf.store().Get(ns_, "a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ((*a)["data"]["v"], "2");
  EXPECT_EQ(inf.store().Get(ns_, "b"), nullptr);
  EXPECT_TRUE(WaitFor([&] { return inf.watcher().state() == WatcherState::kWatching; }, 10s));

  auto stop_start = std::chrono::steady_clock::now();
  inf.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - stop_start, 5s) << "Stop() must not hang";
  std::cout << "watcher lists: " << inf.watcher().lists() << ", error events: " << errors.load()
            << "\n";
}

}  // namespace
}  // namespace switchboard::kube::e2e
