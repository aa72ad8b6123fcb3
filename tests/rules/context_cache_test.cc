// rules::ContextCache: one index per change of what the rules read, and
// the same verdicts as Validate() with the whole Context.
#include "switchboard/rules/context_cache.h"

#include <gtest/gtest.h>

#include <functional>
#include <thread>

namespace {

using nlohmann::json;
using switchboard::rules::Context;
using switchboard::rules::ContextCache;
using switchboard::rules::ContextSnapshot;
using switchboard::rules::ObjectPtr;
using switchboard::rules::Operation;
using switchboard::rules::Report;
using switchboard::rules::Validate;

json Server() {
  return json::parse(R"({"apiVersion":"pubsub.switchboard.dev/v1alpha1","kind":"NatsServer",
    "metadata":{"name":"shared","namespace":"nats","resourceVersion":"1"},
    "spec":{"url":"nats://nats:4222","allowedNamespaces":{"from":"All"}}})");
}
json Backend(const std::string& ns, const std::string& name, const std::string& prefix,
             const std::string& version, const std::string& created) {
  json b = json::parse(R"({"apiVersion":"pubsub.switchboard.dev/v1alpha1","kind":"PubSubBackend",
    "metadata":{},"spec":{"kind":"nats","nats":{"serverRef":{"name":"shared","namespace":"nats"}}}})");
  b["metadata"] = {{"name", name},
                   {"namespace", ns},
                   {"resourceVersion", version},
                   {"creationTimestamp", created}};
  b["spec"]["nats"]["subjectPrefix"] = prefix;
  return b;
}

// A cache of objects the test replaces, as an informer's store would.
struct FakeCache {
  std::vector<ObjectPtr> objects;
  ContextCache cache{[this] { return objects; }};
  void Set(std::vector<json> next) {
    objects.clear();
    for (auto& o : next) objects.push_back(std::make_shared<const json>(std::move(o)));
    cache.Invalidate();
  }
};

std::vector<std::string> Errors(const Report& r) {
  std::vector<std::string> out;
  for (const auto& f : r.errors) out.push_back(f.ToString());
  return out;
}

TEST(ContextCache, SnapshotIsBuiltOncePerChangeNotPerCall) {
  FakeCache c;
  c.Set({Server(), Backend("a", "x", "hatchet.one", "5", "2026-01-01T00:00:00Z")});
  auto first = c.cache.Snapshot();
  EXPECT_EQ(c.cache.Snapshot(), first);
  EXPECT_EQ(c.cache.builds(), 1u);
}

TEST(ContextCache, AChangeTheRulesDoNotReadBuildsNoIndex) {
  FakeCache c;
  json b = Backend("a", "x", "hatchet.one", "5", "2026-01-01T00:00:00Z");
  c.Set({Server(), b});
  auto first = c.cache.Snapshot();
  // A status write: a new resourceVersion, nothing the rules read changed.
  b["metadata"]["resourceVersion"] = "6";
  b["status"] = {{"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}};
  c.Set({Server(), b});
  EXPECT_EQ(c.cache.Snapshot(), first);
  EXPECT_EQ(c.cache.builds(), 1u);
}

TEST(ContextCache, AChangedPrefixANewAndAGoneObjectEachBuildOne) {
  FakeCache c;
  json x = Backend("a", "x", "hatchet.one", "5", "2026-01-01T00:00:00Z");
  json y = Backend("b", "y", "hatchet.two", "7", "2026-01-02T00:00:00Z");
  c.Set({Server(), x});
  c.cache.Snapshot();
  c.Set({Server(), x, y});
  c.cache.Snapshot();
  EXPECT_EQ(c.cache.builds(), 2u);
  // y moves onto x's prefix: y (newer) is refused, naming x.
  y["metadata"]["resourceVersion"] = "8";
  y["spec"]["nats"]["subjectPrefix"] = "hatchet.one";
  c.Set({Server(), x, y});
  auto snap = c.cache.Snapshot();
  EXPECT_EQ(c.cache.builds(), 3u);
  Report r = Validate(y, snap->index(), Operation::kCreate, nullptr, "default");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.errors[0].message.find("a/x"), std::string::npos) << r.errors[0].ToString();
  // x goes: y keeps the prefix.
  c.Set({Server(), y});
  snap = c.cache.Snapshot();
  EXPECT_EQ(c.cache.builds(), 4u);
  EXPECT_TRUE(Validate(y, snap->index(), Operation::kCreate, nullptr, "default").ok());
}

TEST(ContextCache, ObjectsWithoutAVersionAreReadAgain) {
  FakeCache c;
  json x = Backend("a", "x", "hatchet.one", "", "2026-01-01T00:00:00Z");
  c.Set({Server(), x});
  c.cache.Snapshot();
  x["spec"]["nats"]["subjectPrefix"] = "hatchet.changed";
  c.Set({Server(), x});
  c.cache.Snapshot();
  EXPECT_EQ(c.cache.builds(), 2u);
}

TEST(ContextCache, ShapeIsAppliedOncePerVersion) {
  std::vector<ObjectPtr> objects = {std::make_shared<const json>(Server())};
  int shaped = 0;
  ContextCache cache([&] { return objects; },
                     [&](const json& o) {
                       ++shaped;
                       return o;
                     });
  cache.Snapshot();
  cache.Invalidate();
  cache.Snapshot();
  EXPECT_EQ(shaped, 1);
}

TEST(ContextCache, VerdictsEqualValidateWithTheWholeContext) {
  std::vector<json> all = {Server(), Backend("a", "x", "hatchet.one", "5", "2026-01-01T00:00:00Z"),
                           Backend("b", "y", "hatchet.one", "6", "2026-01-02T00:00:00Z"),
                           Backend("c", "z", "hatchet.one.sub", "7", "2026-01-03T00:00:00Z")};
  FakeCache c;
  c.Set(all);
  auto snap = c.cache.Snapshot();
  Context whole;
  whole.servers.push_back(all[0]);
  for (size_t i = 1; i < all.size(); ++i) whole.backends.push_back(all[i]);
  ContextSnapshot from_context(whole);
  for (const auto& o : all) {
    Report cached = Validate(o, snap->index(), Operation::kCreate, nullptr, "default");
    Report direct = Validate(o, whole, Operation::kCreate, nullptr, "default");
    Report snapped = Validate(o, from_context.index(), Operation::kCreate, nullptr, "default");
    EXPECT_EQ(Errors(cached), Errors(direct));
    EXPECT_EQ(Errors(snapped), Errors(direct));
    EXPECT_EQ(cached.warnings.size(), direct.warnings.size());
  }
}

TEST(ContextCache, ConcurrentCallersShareOneBuild) {
  FakeCache c;
  c.Set({Server(), Backend("a", "x", "hatchet.one", "5", "2026-01-01T00:00:00Z")});
  std::vector<std::thread> threads;
  std::vector<std::shared_ptr<const ContextSnapshot>> got(4);
  for (size_t i = 0; i < got.size(); ++i) {
    threads.emplace_back([&, i] { got[i] = c.cache.Snapshot(); });
  }
  for (auto& t : threads) t.join();
  for (const auto& g : got) EXPECT_EQ(g, got[0]);
  EXPECT_EQ(c.cache.builds(), 1u);
}

}  // namespace

// Observe: an event invalidates only when what the rules read of the object
// may have changed; a snapshot that stays current is not listed again.
TEST(ContextCache, ObserveListsAgainOnlyWhenTheRulesReadSomethingNew) {
  std::vector<ObjectPtr> objects;
  int lists = 0;
  ContextCache cache([&] {
    ++lists;
    return objects;
  });
  json b = Backend("a", "x", "hatchet.one", "5", "2026-01-01T00:00:00Z");
  objects = {std::make_shared<const json>(Server()), std::make_shared<const json>(b)};
  cache.Snapshot();
  ASSERT_EQ(lists, 1);

  struct Case {
    std::string name;
    std::function<void(json&)> change;
    bool lists_again;
  };
  const std::vector<Case> cases = {
      {"status conditions and a new resourceVersion",
       [](json& o) {
         o["status"] = {{"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}};
       },
       false},
      {"a finalizer", [](json& o) { o["metadata"]["finalizers"] = {"switchboard.dev/x"}; }, false},
      {"the subject prefix", [](json& o) { o["spec"]["nats"]["subjectPrefix"] = "hatchet.two"; },
       true},
      {"status.username (the name a backend holds)",
       [](json& o) { o["status"]["username"] = "hatchet_x"; }, true},
      {"the server reference", [](json& o) { o["spec"]["nats"]["serverRef"]["name"] = "other"; },
       true},
  };
  for (const auto& c : cases) {
    json after = b;
    after["metadata"]["resourceVersion"] = "6";
    c.change(after);
    const int before = lists;
    cache.Observe(&b, &after);
    cache.Snapshot();
    EXPECT_EQ(lists - before, c.lists_again ? 1 : 0) << c.name;
  }
  // A NatsServer: its status alone does not, its spec does.
  const json server = Server();
  json counted = server;
  counted["metadata"]["resourceVersion"] = "2";
  counted["status"] = {{"installations", 3}};
  json respec = counted;
  respec["spec"]["url"] = "nats://other:4222";
  // An added and a deleted object always do.
  struct Event {
    const json* before;
    const json* after;
    bool lists_again;
  };
  for (const Event& e : std::vector<Event>{{&server, &counted, false},
                                           {&counted, &respec, true},
                                           {nullptr, &b, true},
                                           {&b, nullptr, true}}) {
    const int n = lists;
    cache.Observe(e.before, e.after);
    cache.Snapshot();
    EXPECT_EQ(lists - n, e.lists_again ? 1 : 0);
  }
}
