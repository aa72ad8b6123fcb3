// The operator's owned-Secret cache: what a record keeps of a Secret, and
// how the cache applies a watcher's events (fed here without an API server;
// the e2e tests run it against one).
#include "secret_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "switchboard/operator_logic/objects.h"
#include "switchboard/operator_logic/packed.h"

namespace switchboard::operator_controller {
namespace {

using nlohmann::json;

json Secret(const std::string& ns, const std::string& name, const std::string& rv,
            json data = {{"k", "dg=="}}) {
  return {{"apiVersion", "v1"},
          {"kind", "Secret"},
          {"metadata",
           {{"name", name},
            {"namespace", ns},
            {"uid", "uid-" + name},
            {"resourceVersion", rv},
            {"labels", {{"app.kubernetes.io/managed-by", "switchboard"}}}}},
          {"data", std::move(data)}};
}

TEST(SecretRecord, KeepsWhatReconcileReadsAsTheApiShowsIt) {
  const json s = json::parse(R"({
    "apiVersion": "v1", "kind": "Secret", "type": "Opaque", "immutable": false,
    "metadata": {
      "name": "b-pubsub-credentials", "namespace": "team-a", "uid": "u1",
      "resourceVersion": "42", "creationTimestamp": "2026-01-01T00:00:00Z",
      "labels": {"app.kubernetes.io/managed-by": "switchboard", "a": "b"},
      "annotations": {"pubsub.switchboard.dev/secret-conflict": "env"},
      "deletionTimestamp": "2026-01-02T00:00:00Z",
      "ownerReferences": [{"apiVersion": "pubsub.switchboard.dev/v1alpha1",
        "kind": "PubSubBackend", "name": "b", "uid": "owner", "controller": true,
        "blockOwnerDeletion": true}]},
    "data": {"username": "dQ==", "password": "cHc="}})");
  const SecretRecord r = SecretRecordOf(s);
  EXPECT_EQ(r.ns, "team-a");
  EXPECT_EQ(r.name, "b-pubsub-credentials");
  EXPECT_EQ(r.uid, "u1");
  EXPECT_EQ(r.resource_version, "42");
  EXPECT_EQ(r.deletion_timestamp, "2026-01-02T00:00:00Z");
  EXPECT_EQ(r.labels,
            (SecretRecord::Pairs{{"a", "b"}, {"app.kubernetes.io/managed-by", "switchboard"}}));
  EXPECT_EQ(r.owners, (std::vector<SecretRecord::Owner>{{"PubSubBackend", "b", "owner"}}));
  EXPECT_EQ(r.data, (SecretRecord::Pairs{{"password", "cHc="}, {"username", "dQ=="}}));

  const json want = json::parse(R"({
    "metadata": {
      "name": "b-pubsub-credentials", "namespace": "team-a", "uid": "u1",
      "resourceVersion": "42",
      "labels": {"app.kubernetes.io/managed-by": "switchboard", "a": "b"},
      "annotations": {"pubsub.switchboard.dev/secret-conflict": "env"},
      "deletionTimestamp": "2026-01-02T00:00:00Z",
      "ownerReferences": [{"kind": "PubSubBackend", "name": "b", "uid": "owner"}]},
    "data": {"password": "cHc=", "username": "dQ=="}})");
  const json view = ObjectOf(r);
  EXPECT_EQ(view, want);
  EXPECT_FALSE(operator_logic::IsPacked(view["data"]));
  auto decoded = operator_logic::DecodeSecretData(view);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->at("password"), "pw");
  EXPECT_EQ(decoded->at("username"), "u");
  // The view reads back to the same record.
  EXPECT_EQ(SecretRecordOf(view), r);
}

// What the API never sends (a member of the wrong type, no metadata) is left
// out rather than thrown on, and empty members are left out of the view.
TEST(SecretRecord, OddShapesAreLeftOut) {
  EXPECT_EQ(SecretRecordOf(json::array({1, 2})), SecretRecord{});
  EXPECT_EQ(ObjectOf(SecretRecordOf(json{{"data", {{"k", "dg=="}}}, {"type", "Opaque"}})),
            (json{{"metadata", json::object()}, {"data", {{"k", "dg=="}}}}));
  const json odd = {{"metadata",
                     {{"name", "x"},
                      {"namespace", 7},
                      {"labels", {{"a", 1}, {"b", "c"}}},
                      {"annotations", "not-an-object"},
                      {"ownerReferences", json::array({"not-an-object", {{"kind", "K"}}})}}},
                    {"data", {{"k", nullptr}}}};
  const SecretRecord r = SecretRecordOf(odd);
  EXPECT_EQ(r.name, "x");
  EXPECT_EQ(r.ns, "");
  EXPECT_EQ(r.labels, (SecretRecord::Pairs{{"b", "c"}}));
  EXPECT_TRUE(r.annotations.empty());
  EXPECT_EQ(r.owners, (std::vector<SecretRecord::Owner>{{"K", "", ""}}));
  EXPECT_TRUE(r.data.empty());
  EXPECT_EQ(ObjectOf(r), json::parse(R"({"metadata": {"name": "x", "labels": {"b": "c"},
    "ownerReferences": [{"kind": "K", "name": "", "uid": ""}]}})"));
}

struct Seen {
  std::vector<std::string> events;  // "add ns/name@rv", "update ns/name@rv->rv", "delete ..."
  kube::StoreEventHandler Handler() {
    auto id = [](const kube::ObjectPtr& o) {
      const json& m = (*o)["metadata"];
      return m.value("namespace", "") + "/" + m.value("name", "") + "@" +
             m.value("resourceVersion", "");
    };
    kube::StoreEventHandler h;
    h.on_add = [this, id](const kube::ObjectPtr& o) { events.push_back("add " + id(o)); };
    h.on_update = [this, id](const kube::ObjectPtr& a, const kube::ObjectPtr& b) {
      events.push_back("update " + id(a) + "->" + (*b)["metadata"].value("resourceVersion", ""));
    };
    h.on_delete = [this, id](const kube::ObjectPtr& o) { events.push_back("delete " + id(o)); };
    return h;
  }
};

kube::WatcherEvent Applied(json object) {
  kube::WatcherEvent ev;
  ev.type = kube::WatcherEvent::Type::kApplied;
  ev.object = std::move(object);
  return ev;
}

kube::WatcherEvent Deleted(json object) {
  kube::WatcherEvent ev;
  ev.type = kube::WatcherEvent::Type::kDeleted;
  ev.object = std::move(object);
  return ev;
}

kube::WatcherEvent Listed(std::vector<std::string> keys) {
  kube::WatcherEvent ev;
  ev.type = kube::WatcherEvent::Type::kRestarted;
  ev.listed = std::move(keys);
  return ev;
}

TEST(SecretCache, AppliesEventsAsAStoreWouldAndReadsAsTheApiShows) {
  SecretCache cache(nullptr, {"b", "a", "a"}, {});
  Seen seen;
  cache.AddEventHandler(seen.Handler());
  EXPECT_FALSE(cache.HasSynced());

  // A list, item by item, then its end: synced once both namespaces listed.
  auto ev = Applied(Secret("a", "x", "1"));
  cache.Apply(ev, "a");
  ev = Listed({"a/x"});
  cache.Apply(ev, "a");
  EXPECT_FALSE(cache.HasSynced());
  ev = Applied(Secret("b", "y", "2"));
  cache.Apply(ev, "b");
  ev = Listed({"b/y"});
  cache.Apply(ev, "b");
  EXPECT_TRUE(cache.HasSynced());
  EXPECT_TRUE(cache.WaitForSync(std::chrono::milliseconds(0)));
  EXPECT_EQ(cache.Size(), 2u);

  // Get: the object as ObjectOf shows it; null for what is not there.
  ASSERT_NE(cache.Get("a", "x"), nullptr);
  EXPECT_EQ(*cache.Get("a/x"), ObjectOf(SecretRecordOf(Secret("a", "x", "1"))));
  EXPECT_EQ(cache.Get("a", "y"), nullptr);
  EXPECT_EQ(cache.Get("c", "x"), nullptr);
  ASSERT_NE(cache.Record("b", "y"), nullptr);
  EXPECT_EQ(cache.Record("b", "y")->resource_version, "2");

  // The same version again (a relist of an unchanged Secret): no event.
  ev = Applied(Secret("a", "x", "1"));
  cache.Apply(ev, "a");
  // A new version: an update, with both states.
  ev = Applied(Secret("a", "x", "3", {{"k", "dw=="}}));
  cache.Apply(ev, "a");
  EXPECT_EQ((*cache.Get("a", "x"))["data"], (json{{"k", "dw=="}}));
  // A watched delete reports the state the server sent.
  ev = Deleted(Secret("b", "y", "4"));
  cache.Apply(ev, "b");
  EXPECT_EQ(cache.Get("b", "y"), nullptr);

  // A relist of namespace a that lacks a/x drops it, and only it: b's
  // Secrets are another watcher's.
  ev = Applied(Secret("b", "z", "5"));
  cache.Apply(ev, "b");
  ev = Listed({});
  cache.Apply(ev, "a");
  EXPECT_EQ(cache.Get("a", "x"), nullptr);
  EXPECT_NE(cache.Get("b", "z"), nullptr);
  // An error changes nothing.
  kube::WatcherEvent err;
  err.type = kube::WatcherEvent::Type::kError;
  cache.Apply(err, "b");
  EXPECT_EQ(cache.Size(), 1u);

  EXPECT_EQ(seen.events, (std::vector<std::string>{"add a/x@1", "add b/y@2", "update a/x@1->3",
                                                   "delete b/y@4", "add b/z@5", "delete a/x@3"}));
}

// Watching every namespace: one watcher, whose relist covers every key.
TEST(SecretCache, OneWatcherForAllNamespacesOwnsEveryKey) {
  SecretCache cache(nullptr, {}, {});
  auto ev = Applied(Secret("a", "x", "1"));
  cache.Apply(ev, "");
  ev = Applied(Secret("b", "x", "1"));
  cache.Apply(ev, "");
  ev = Listed({"b/x"});
  cache.Apply(ev, "");
  EXPECT_TRUE(cache.HasSynced());
  EXPECT_EQ(cache.Get("a", "x"), nullptr);
  EXPECT_NE(cache.Get("b", "x"), nullptr);
}

// A namespace whose name is a prefix of another's: a relist of "a" leaves
// "ab"'s Secrets alone.
TEST(SecretCache, ARelistTouchesOnlyItsOwnNamespace) {
  SecretCache cache(nullptr, {"a", "ab"}, {});
  auto ev = Applied(Secret("ab", "x", "1"));
  cache.Apply(ev, "ab");
  ev = Listed({});
  cache.Apply(ev, "a");
  EXPECT_NE(cache.Get("ab", "x"), nullptr);
}

}  // namespace
}  // namespace switchboard::operator_controller
