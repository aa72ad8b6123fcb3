// rules::ContextCache: one index per change of what the rules read, and
// the same verdicts as Validate() with the whole Context.
#include "switchboard/rules/context_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "switchboard/testing/objects.h"

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
  return switchboard::testing::ServerBuilder()
      .ResourceVersion("1")
      .Url("nats://nats:4222")
      .AllowAll();
}
json Backend(const std::string& ns, const std::string& name, const std::string& prefix,
             const std::string& version, const std::string& created) {
  return switchboard::testing::BackendBuilder(ns, name)
      .ResourceVersion(version)
      .Created(created)
      .Prefix(prefix);
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
  // A backend's changes are carried into the next snapshot without a
  // listing: a new index when the rules read something new, none otherwise.
  for (const auto& c : cases) {
    json after = b;
    after["metadata"]["resourceVersion"] = "6";
    c.change(after);
    const int before = lists;
    const uint64_t builds = cache.builds();
    auto old = cache.Snapshot();
    cache.Observe(&b, &after);
    auto now = cache.Snapshot();
    EXPECT_EQ(lists, before) << c.name;
    EXPECT_EQ(cache.builds() - builds, c.lists_again ? 1u : 0u) << c.name;
    EXPECT_EQ(now != old, c.lists_again) << c.name;
    // Put back, as the next event would.
    cache.Observe(&after, &b);
    cache.Snapshot();
  }
  // A NatsServer: its status alone does not, its spec does.
  const json server = Server();
  json counted = server;
  counted["metadata"]["resourceVersion"] = "2";
  counted["status"] = {{"installations", 3}};
  json respec = counted;
  respec["spec"]["url"] = "nats://other:4222";
  // An added or deleted server does; an added or deleted backend is
  // carried alone.
  struct Event {
    const json* before;
    const json* after;
    bool lists_again;
  };
  for (const Event& e : std::vector<Event>{{&server, &counted, false},
                                           {&counted, &respec, true},
                                           {nullptr, &server, true},
                                           {&server, nullptr, true},
                                           {nullptr, &b, false},
                                           {&b, nullptr, false}}) {
    const int n = lists;
    cache.Observe(e.before, e.after);
    cache.Snapshot();
    EXPECT_EQ(lists - n, e.lists_again ? 1 : 0);
  }
}

namespace {

// The objects of a cache as a whole Context (servers, then backends).
Context WholeContext(const std::map<std::string, json>& objects) {
  Context whole;
  for (const auto& [key, o] : objects) {
    if (o["kind"] == "NatsServer") whole.servers.push_back(o);
  }
  for (const auto& [key, o] : objects) {
    if (o["kind"] == "PubSubBackend") whole.backends.push_back(o);
  }
  return whole;
}

std::vector<std::string> Warnings(const Report& r) {
  std::vector<std::string> out;
  for (const auto& f : r.warnings) out.push_back(f.ToString());
  return out;
}

}  // namespace

// A snapshot carried forward one backend change at a time judges every
// object as an index built from the whole set does, step after step: adds,
// prefix moves onto another's prefix and away, nested prefixes, a rotation's
// status.username, deletions, and enough changes to compact the index.
TEST(ContextCache, CarriedChangesJudgeAsAWholeRebuild) {
  std::map<std::string, json> objects;  // by kind/namespace/name, as the store would
  int lists = 0;
  ContextCache cache([&] {
    ++lists;
    std::vector<ObjectPtr> out;
    for (const auto& [key, o] : objects) out.push_back(std::make_shared<const json>(o));
    return out;
  });
  auto key = [](const json& o) {
    return o["kind"].get<std::string>() + "/" + o["metadata"]["namespace"].get<std::string>() +
           "/" + o["metadata"]["name"].get<std::string>();
  };
  int version = 10;
  // The store changes first, then the handler observes, as kube::Store does.
  auto put = [&](json o) {
    o["metadata"]["resourceVersion"] = std::to_string(++version);
    const std::string k = key(o);
    auto it = objects.find(k);
    std::optional<json> before;
    if (it != objects.end()) before = it->second;
    objects[k] = o;
    cache.Observe(before ? &*before : nullptr, &objects[k]);
  };
  auto drop = [&](const std::string& k) {
    json before = objects.at(k);
    objects.erase(k);
    cache.Observe(&before, nullptr);
  };
  auto check = [&](const std::string& step) {
    auto snap = cache.Snapshot();
    Context whole = WholeContext(objects);
    for (const auto& [k, o] : objects) {
      Report carried = Validate(o, snap->index(), Operation::kCreate, nullptr, "default");
      Report direct = Validate(o, whole, Operation::kCreate, nullptr, "default");
      EXPECT_EQ(Errors(carried), Errors(direct)) << step << ": " << k;
      EXPECT_EQ(Warnings(carried), Warnings(direct)) << step << ": " << k;
    }
  };

  put(Server());
  check("server");
  const int lists_at_start = lists;
  auto backend = [](int i, const std::string& prefix) {
    return Backend("ns" + std::to_string(i % 3), "b" + std::to_string(i), prefix, "",
                   "2026-01-0" + std::to_string(1 + i % 9) + "T00:00:00Z");
  };
  for (int i = 0; i < 6; ++i) put(backend(i, "hatchet.p" + std::to_string(i)));
  check("six added");
  put(backend(4, "hatchet.p1"));  // onto b1's prefix: the newer one is refused
  check("b4 onto b1's prefix");
  put(backend(5, "hatchet.p1.sub"));  // nested under b1's
  check("b5 nested");
  json rotating = backend(2, "hatchet.p2");
  rotating["status"]["username"] = "ns2-b2-r1";
  put(rotating);
  check("b2 rotating");
  json taker = backend(3, "hatchet.p3");
  taker["spec"]["nats"]["credentials"]["username"] = "ns2-b2-r1";  // b2's current user
  put(taker);
  check("b3 takes b2's rotated user name");
  drop(key(backend(1, "")));
  check("b1 deleted: b4 keeps hatchet.p1");
  put(backend(4, "hatchet.p4"));
  check("b4 back");
  // More than three others nested with one prefix: the three named are the
  // same whatever order the backends were indexed in (b10, changed last,
  // gets the newest id here and the oldest in a whole rebuild).
  for (int i = 10; i < 15; ++i)
    put(backend(i, i == 10 ? "hatchet.n" : "hatchet.n.s" + std::to_string(i)));
  json moved = backend(11, "hatchet.n.s11");
  moved["status"]["username"] = "ns2-b11-r1";
  put(moved);
  put(backend(10, "hatchet.n.s10"));
  put(backend(15, "hatchet.n"));
  check("five nested under hatchet.n");
  // Two backends writing one env Secret, one then moved and one deleted.
  json env_a = backend(30, "hatchet.e30"), env_b = backend(33, "hatchet.e33");
  env_a["spec"]["output"]["secretName"] = "shared-env";
  env_b["spec"]["output"]["secretName"] = "shared-env";
  put(env_a);
  put(env_b);
  check("two backends write one env Secret");
  env_a["spec"]["nats"]["subjectPrefix"] = "hatchet.e30b";
  put(env_a);
  check("one of them moved");
  drop(key(env_b));
  check("the other deleted");
  EXPECT_EQ(lists, lists_at_start) << "backend changes alone never list the cache";
  // Many more changes than objects: the index is compacted by a listing,
  // and judges the same.
  for (int round = 0; round < 100; ++round) {
    put(backend(round % 6 == 1 ? 7 : round % 6, "hatchet.r" + std::to_string(round % 4)));
    cache.Snapshot();
  }
  check("after 100 changes");
  EXPECT_GT(lists, lists_at_start);
  EXPECT_LT(lists, lists_at_start + 10);
  // A server's change still lists.
  json narrowed = Server();
  narrowed["spec"]["allowedNamespaces"] = {{"from", "List"}, {"names", {"ns0"}}};
  const int before_server = lists;
  put(narrowed);
  check("server allows ns0 only");
  EXPECT_EQ(lists, before_server + 1);
}

// Events recorded while another thread takes snapshots end up in the
// snapshot taken after the last of them.
TEST(ContextCache, ChangesObservedDuringSnapshotsAreNotLost) {
  std::mutex mu;
  std::map<std::string, json> objects;
  ContextCache cache([&] {
    std::lock_guard lock(mu);
    std::vector<ObjectPtr> out;
    for (const auto& [k, o] : objects) out.push_back(std::make_shared<const json>(o));
    return out;
  });
  {
    json s = Server();
    std::lock_guard lock(mu);
    objects["s"] = s;
  }
  cache.Invalidate();
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done.load()) cache.Snapshot();
  });
  for (int i = 0; i < 200; ++i) {
    json b = Backend("a", "x" + std::to_string(i % 20), "hatchet.x" + std::to_string(i % 20),
                     std::to_string(100 + i), "2026-01-01T00:00:00Z");
    json before;
    bool had = false;
    {
      std::lock_guard lock(mu);
      auto it = objects.find("x" + std::to_string(i % 20));
      had = it != objects.end();
      if (had) before = it->second;
      objects["x" + std::to_string(i % 20)] = b;
    }
    if (i % 7 == 0) {
      cache.Invalidate();
    } else {
      cache.Observe(had ? &before : nullptr, &b);
    }
  }
  done = true;
  reader.join();
  // Every backend's final prefix is there: a second backend on it is refused.
  auto snap = cache.Snapshot();
  for (int k = 0; k < 20; ++k) {
    json probe =
        Backend("b", "probe", "hatchet.x" + std::to_string(k), "1", "2027-01-01T00:00:00Z");
    EXPECT_FALSE(Validate(probe, snap->index(), Operation::kCreate, nullptr, "default").ok()) << k;
  }
}

// A change observed before a listing is never applied after it: the
// listing read the cache, which may already hold a newer version whose
// event is still on its way.
TEST(ContextCache, AChangeOlderThanAListingIsNotAppliedAfterIt) {
  std::vector<ObjectPtr> objects;
  ContextCache cache([&] { return objects; });
  json x = Backend("a", "x", "hatchet.one", "5", "2026-01-01T00:00:00Z");
  objects = {std::make_shared<const json>(Server()), std::make_shared<const json>(x)};
  cache.Snapshot();
  // x moves to hatchet.two (observed), then on to hatchet.three: the cache
  // holds it, its event not observed yet.
  json two = x, three = x;
  two["metadata"]["resourceVersion"] = "6";
  two["spec"]["nats"]["subjectPrefix"] = "hatchet.two";
  three["metadata"]["resourceVersion"] = "7";
  three["spec"]["nats"]["subjectPrefix"] = "hatchet.three";
  cache.Observe(&x, &two);
  objects[1] = std::make_shared<const json>(three);
  cache.Invalidate();  // say, a server changed: the next snapshot lists
  cache.Snapshot();
  auto snap = cache.Snapshot();  // nothing newer observed
  auto taken = [&](const std::string& prefix) {
    json probe = Backend("b", "probe", prefix, "1", "2027-01-01T00:00:00Z");
    return !Validate(probe, snap->index(), Operation::kCreate, nullptr, "default").ok();
  };
  EXPECT_TRUE(taken("hatchet.three"));
  EXPECT_FALSE(taken("hatchet.two")) << "the older observed change was applied after the listing";
}
