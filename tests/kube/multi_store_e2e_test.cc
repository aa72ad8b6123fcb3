// MultiStore against the real API server: informers over a set of
// namespaces (or all of them) read as one cache. Objects outside the set
// are not seen, lookups by namespace and by key find the right informer,
// List() is sorted by key whatever order the namespaces were given in, and
// changes in every namespace reach the cache and the handlers.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>

#include "kube_e2e.h"
#include "switchboard/kube/multi_store.h"
#include "switchboard/testing/wait.h"

namespace switchboard::kube::e2e {
namespace {

using namespace std::chrono_literals;
using switchboard::testing::WaitFor;

class MultiStoreE2E : public KubeTest {
 protected:
  // A ConfigMap in `ns` labelled for this test.
  void Create(const std::string& ns, const std::string& name) {
    json cm = ConfigMap(name, {{"v", "1"}}, {{"multistore", ns_}});
    cm["metadata"]["namespace"] = ns;
    auto r = client_->Create(resources::ConfigMap(), cm);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  static std::vector<std::string> Keys(const std::vector<ObjectPtr>& objects) {
    std::vector<std::string> keys;
    for (const auto& o : objects) keys.push_back(ObjectKeyOf(*o));
    return keys;
  }
  WatcherOptions Labelled() const {
    WatcherOptions wo;
    wo.label_selector = "multistore=" + ns_;
    return wo;
  }
};

TEST_F(MultiStoreE2E, ReadsTheWatchedNamespacesAsOneCache) {
  // Two watched namespaces whose keys sort unlike their names ("x-a/..."
  // before "x/..."), given in reverse order, and one not watched.
  const std::string first = ns_ + "-a", second = ns_;
  std::string unwatched = NewNamespace();
  ASSERT_FALSE(unwatched.empty());
  json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", first}}}};
  ASSERT_TRUE(client_->Create(resources::Namespace(), ns).ok());
  ASSERT_NO_FATAL_FAILURE(Create(first, "a1"));
  ASSERT_NO_FATAL_FAILURE(Create(second, "b1"));
  ASSERT_NO_FATAL_FAILURE(Create(second, "b2"));
  ASSERT_NO_FATAL_FAILURE(Create(unwatched, "c1"));

  MultiStore store(client_.get(), resources::ConfigMap(), {second, first}, Labelled());
  std::atomic<int> adds{0}, deletes{0};
  store.AddEventHandler(
      {[&](const ObjectPtr&) { adds++; }, nullptr, [&](const ObjectPtr&) { deletes++; }});
  EXPECT_FALSE(store.HasSynced());
  store.Start();
  ASSERT_TRUE(store.WaitForSync(10s));
  EXPECT_TRUE(store.HasSynced());

  EXPECT_EQ(store.Size(), 3u);
  EXPECT_NE(store.Get(first, "a1"), nullptr);
  EXPECT_NE(store.Get(ObjectKey(second, "b2")), nullptr);
  EXPECT_EQ(store.Get(unwatched, "c1"), nullptr) << "outside the watched namespaces";
  EXPECT_EQ(store.Get(first, "b1"), nullptr) << "the name in another namespace";
  std::vector<std::string> keys = Keys(store.List());
  EXPECT_EQ(keys, (std::vector<std::string>{ObjectKey(first, "a1"), ObjectKey(second, "b1"),
                                            ObjectKey(second, "b2")}));
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  EXPECT_EQ(Keys(store.List(second)),
            (std::vector<std::string>{ObjectKey(second, "b1"), ObjectKey(second, "b2")}));
  // A store reports synced once its cache holds the list, and calls its
  // handlers after (Store::Replace): the adds may still be on their way.
  EXPECT_TRUE(WaitFor([&] { return adds.load() == 3; }, 10s)) << adds.load();

  // Changes in each watched namespace reach the cache; the unwatched one's
  // do not.
  ASSERT_NO_FATAL_FAILURE(Create(first, "a2"));
  ASSERT_NO_FATAL_FAILURE(Create(unwatched, "c2"));
  ASSERT_TRUE(client_->Delete(resources::ConfigMap(), second, "b1").ok());
  // The handlers run after the cache changed: wait for both.
  EXPECT_TRUE(WaitFor(
      [&] {
        return store.Size() == 3u && store.Get(first, "a2") != nullptr &&
               store.Get(second, "b1") == nullptr && adds.load() == 4 && deletes.load() == 1;
      },
      10s))
      << store.Size() << " objects, " << adds.load() << " adds, " << deletes.load() << " deletes";
  EXPECT_EQ(store.Get(unwatched, "c2"), nullptr);
  store.Stop();
}

TEST_F(MultiStoreE2E, NoNamespacesWatchesThemAll) {
  std::string other = NewNamespace();
  ASSERT_FALSE(other.empty());
  ASSERT_NO_FATAL_FAILURE(Create(ns_, "x"));
  ASSERT_NO_FATAL_FAILURE(Create(other, "y"));

  MultiStore store(client_.get(), resources::ConfigMap(), {}, Labelled());
  store.Start();
  ASSERT_TRUE(store.WaitForSync(10s));
  EXPECT_EQ(store.Size(), 2u);
  EXPECT_NE(store.Get(ns_, "x"), nullptr);
  EXPECT_NE(store.Get(ObjectKey(other, "y")), nullptr);
  EXPECT_EQ(Keys(store.List(other)), (std::vector<std::string>{ObjectKey(other, "y")}));
  ASSERT_NO_FATAL_FAILURE(Create(other, "z"));
  EXPECT_TRUE(WaitFor([&] { return store.Get(other, "z") != nullptr; }, 10s));
  EXPECT_EQ(store.Size(), 3u);
  store.Stop();
}

}  // namespace
}  // namespace switchboard::kube::e2e
