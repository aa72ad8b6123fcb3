// The cache: keys, sync state, snapshots and event handlers.
#include "switchboard/kube/store.h"

#include <gtest/gtest.h>

#include <thread>

namespace switchboard::kube {
namespace {

using namespace std::chrono_literals;

json Obj(const std::string& ns, const std::string& name, const std::string& rv,
         const std::string& data = "") {
  return {{"metadata", {{"namespace", ns}, {"name", name}, {"resourceVersion", rv}}},
          {"data", data}};
}

struct Recorder {
  std::vector<std::string> events;
  StoreEventHandler Handler() {
    return {[this](const ObjectPtr& o) { events.push_back("add " + ObjectKeyOf(*o)); },
            [this](const ObjectPtr& a, const ObjectPtr& b) {
              events.push_back("update " + ObjectKeyOf(*b) + " " + ResourceVersionOf(*a) + "->" +
                               ResourceVersionOf(*b));
            },
            [this](const ObjectPtr& o) { events.push_back("delete " + ObjectKeyOf(*o)); }};
  }
};

TEST(Store, SyncedOnlyAfterFirstReplace) {
  Store s;
  EXPECT_FALSE(s.HasSynced());
  EXPECT_FALSE(s.WaitForSync(10ms));
  s.Upsert(Obj("a", "x", "1"));
  EXPECT_FALSE(s.HasSynced()) << "a watch event is not a complete list";
  std::thread t([&] { s.Replace({}); });
  EXPECT_TRUE(s.WaitForSync(5s));
  t.join();
  EXPECT_TRUE(s.HasSynced());
  EXPECT_EQ(s.Size(), 0u);
}

TEST(Store, ReplaceEmitsTheDifference) {
  Store s;
  Recorder r;
  s.AddEventHandler(r.Handler());
  s.Replace({Obj("a", "x", "1"), Obj("a", "y", "1"), Obj("b", "z", "1")});
  EXPECT_EQ(r.events, (std::vector<std::string>{"add a/x", "add a/y", "add b/z"}));
  r.events.clear();
  // Relist: x unchanged, y changed, z gone, w new.
  s.Replace({Obj("a", "x", "1"), Obj("a", "y", "2"), Obj("a", "w", "3")});
  EXPECT_EQ(r.events, (std::vector<std::string>{"add a/w", "update a/y 1->2", "delete b/z"}));
  EXPECT_EQ(s.Keys(), (std::vector<std::string>{"a/w", "a/x", "a/y"}));
}

TEST(Store, RelistKeepsTheCachedCopyOfAnUnchangedObject) {
  Store s;
  s.Replace({Obj("a", "x", "1", "cached"), Obj("a", "y", "1")});
  ObjectPtr x = s.Get("a/x");
  ObjectPtr y = s.Get("a/y");
  s.Replace({Obj("a", "x", "1", "listed"), Obj("a", "y", "2")});
  EXPECT_EQ(s.Get("a/x"), x) << "same resourceVersion: the cached object stays";
  EXPECT_EQ((*s.Get("a/x"))["data"], "cached");
  EXPECT_NE(s.Get("a/y"), y);
  EXPECT_EQ(ResourceVersionOf(*s.Get("a/y")), "2");
}

TEST(Store, UpsertRemoveAndGet) {
  Store s;
  Recorder r;
  s.AddEventHandler(r.Handler());
  s.Upsert(Obj("a", "x", "1"));
  s.Upsert(Obj("a", "x", "2"));
  ASSERT_NE(s.Get("a", "x"), nullptr);
  EXPECT_EQ(ResourceVersionOf(*s.Get("a/x")), "2");
  s.Remove(Obj("a", "x", "3"));
  EXPECT_EQ(s.Get("a/x"), nullptr);
  EXPECT_EQ(r.events, (std::vector<std::string>{"add a/x", "update a/x 1->2", "delete a/x"}));
  // Cluster-scoped objects are keyed by name only.
  s.Upsert({{"metadata", {{"name", "cluster-thing"}}}});
  EXPECT_NE(s.Get("cluster-thing"), nullptr);
}

TEST(Store, SnapshotsOutliveUpdates) {
  Store s;
  s.Replace({Obj("a", "x", "1", "old")});
  auto snapshot = s.List();
  ObjectPtr held = s.Get("a/x");
  s.Upsert(Obj("a", "x", "2", "new"));
  s.Remove(Obj("a", "x", "2"));
  ASSERT_EQ(snapshot.size(), 1u);
  EXPECT_EQ((*snapshot[0])["data"], "old");
  EXPECT_EQ((*held)["data"], "old");
  EXPECT_EQ(s.Size(), 0u);
}

TEST(Store, ConcurrentReadersWhileWriting) {
  Store s;
  s.Replace({});
  std::atomic<bool> stop{false};
  std::vector<std::thread> readers;
  for (int i = 0; i < 3; ++i) {
    readers.emplace_back([&] {
      while (!stop.load()) {
        for (const auto& o : s.List()) ASSERT_TRUE(o->contains("metadata"));
        (void)s.Get("a/k1");
      }
    });
  }
  for (int i = 0; i < 2000; ++i) {
    s.Upsert(Obj("a", "k" + std::to_string(i % 10), std::to_string(i)));
    if (i % 7 == 0) s.Remove(Obj("a", "k" + std::to_string(i % 10), ""));
  }
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_LE(s.Size(), 10u);
}

}  // namespace
}  // namespace switchboard::kube
