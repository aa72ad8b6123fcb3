// What the operator's caches keep of an object: everything a reconcile reads
// survives, bookkeeping it never reads does not.
#include "cache_shapes.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "secret_io.h"
#include "secret_record.h"
#include "switchboard/operator_logic/objects.h"
#include "switchboard/operator_logic/packed.h"
#include "switchboard/rules/validate.h"

namespace switchboard::operator_controller {
using operator_logic::ApiShaped;
using operator_logic::Pack;
namespace {

TEST(CacheShapes, CustomObjectKeepsSpecStatusAndMetadataReconcileReads) {
  json b = json::parse(R"({
    "apiVersion": "pubsub.switchboard.dev/v1alpha1", "kind": "PubSubBackend",
    "metadata": {"name": "b", "namespace": "team-a", "uid": "u", "resourceVersion": "7",
      "generation": 2, "creationTimestamp": "2026-01-01T00:00:00Z",
      "labels": {"a": "b"}, "annotations": {"pubsub.switchboard.dev/rotate-password": "1"},
      "finalizers": ["pubsub.switchboard.dev/cleanup"], "selfLink": "/x"},
    "spec": {"kind": "nats"}, "status": {"username": "u"}, "extra": 1})");
  json want = b;
  want.erase("extra");
  want["metadata"].erase("selfLink");
  want["status"] = Pack({{"username", "u"}});
  CompactCustomObject(b);
  EXPECT_EQ(b, want);
  EXPECT_EQ(StatusOf(b), (json{{"username", "u"}}));
  // Read as if it came from the API, the cached status fails loudly.
  EXPECT_THROW((void)std::as_const(b)["status"]["username"], json::type_error);
}

// The rules (shared with the webhook and the CLI) judge an object as the API
// shows it: a cached object goes to them through ApiShaped.
TEST(CacheShapes, CachedObjectsReachTheRulesAsTheApiShowsThem) {
  json server = json::parse(R"({
    "apiVersion": "pubsub.switchboard.dev/v1alpha1", "kind": "NatsServer",
    "metadata": {"name": "shared", "namespace": "nats", "uid": "s", "generation": 1},
    "spec": {"url": "nats://nats.nats.svc:4222"},
    "status": {"installations": 2, "conditions": [{"type": "Ready", "status": "True",
      "reason": "Rendered", "message": "m", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})");
  ASSERT_TRUE(rules::Validate(server, {}, rules::Operation::kCreate).errors.empty());
  json cached = server;
  CompactCustomObject(cached);
  ASSERT_TRUE(operator_logic::IsPacked(cached["status"]));
  EXPECT_FALSE(rules::Validate(cached, {}, rules::Operation::kCreate).errors.empty());
  EXPECT_EQ(ApiShaped(cached), server);
  EXPECT_TRUE(rules::Validate(ApiShaped(cached), {}, rules::Operation::kCreate).errors.empty());
}

TEST(CacheShapes, NonObjectsAreLeftAlone) {
  json a = json::array({1, 2});
  CompactCustomObject(a);
  EXPECT_EQ(a, json::array({1, 2}));
}

// Each shape's parse mask keeps at least what its transform (for a Secret,
// its record) keeps: an object parsed through the mask and then shaped is
// the object parsed whole and shaped, and what the shape drops
// (managedFields, a Secret's type, an owner reference's other fields) is
// never built.
TEST(CacheShapes, ParseMasksKeepWhatTheShapesKeep) {
  const std::string secret = R"({
    "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
    "metadata": {"name": "b-nats-env", "namespace": "team-a", "uid": "u1",
      "resourceVersion": "42", "creationTimestamp": "2026-01-01T00:00:00Z",
      "labels": {"app.kubernetes.io/managed-by": "switchboard"},
      "annotations": {"pubsub.switchboard.dev/content-hash": "sha256:00"},
      "managedFields": [{"manager": "switchboard-operator", "fieldsV1": {"f:data": {}}}],
      "ownerReferences": [
        {"apiVersion": "pubsub.switchboard.dev/v1alpha1", "kind": "PubSubBackend",
         "name": "b", "uid": "owner", "controller": true, "blockOwnerDeletion": true},
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "other"}]},
    "data": {"SERVER_MSGQUEUE_PUBSUB_KIND": "bmF0cw=="}})";
  const std::string backend = R"({
    "apiVersion": "pubsub.switchboard.dev/v1alpha1", "kind": "PubSubBackend",
    "metadata": {"name": "b", "namespace": "team-a", "uid": "u", "resourceVersion": "7",
      "generation": 2, "creationTimestamp": "2026-01-01T00:00:00Z",
      "deletionTimestamp": "2026-01-02T00:00:00Z", "labels": {"a": "b"},
      "annotations": {"k": "v"}, "finalizers": ["pubsub.switchboard.dev/cleanup"],
      "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]},
    "spec": {"kind": "nats", "nats": {"serverRef": {"name": "shared"}}},
    "status": {"observedGeneration": 2, "conditions": [{"type": "Ready", "status": "True"}]}})";
  struct Case {
    const char* name;
    const std::string& text;
    kube::FieldMask mask;
    void (*shape)(json&);
  };
  auto record = [](json& s) { s = ObjectOf(SecretRecordOf(s)); };
  for (const Case& c : {Case{"secret", secret, OwnedSecretFields(), record},
                        Case{"backend", backend, CustomObjectFields(), CompactCustomObject}}) {
    SCOPED_TRACE(c.name);
    json whole = json::parse(c.text);
    json masked = kube::ParseMasked(c.text, c.mask);
    ASSERT_FALSE(masked.is_discarded());
    EXPECT_FALSE(masked["metadata"].contains("managedFields"));
    c.shape(whole);
    c.shape(masked);
    EXPECT_EQ(masked, whole);
  }
  json masked_secret = kube::ParseMasked(secret, OwnedSecretFields());
  EXPECT_FALSE(masked_secret.contains("type"));
  EXPECT_FALSE(masked_secret["metadata"].contains("creationTimestamp"));
  EXPECT_EQ(masked_secret["metadata"]["ownerReferences"][0],
            (json{{"kind", "PubSubBackend"}, {"name", "b"}, {"uid", "owner"}}));
}

// RecentWrites keeps bytes, not a DOM; a create is "fresh" only for exactly
// the object that was created.
TEST(RecentWrites, FreshOnlyForTheSameObject) {
  RecentWrites recent;
  const json a = {{"metadata", {{"name", "x"}}}, {"data", {{"k", "dg=="}}}};
  json b = a;
  b["data"]["k"] = "dw==";
  EXPECT_FALSE(recent.Fresh("ns/x", a));
  recent.Created("ns/x", a);
  EXPECT_TRUE(recent.Fresh("ns/x", a));
  EXPECT_FALSE(recent.Fresh("ns/x", b));
  EXPECT_FALSE(recent.Fresh("ns/y", a));
}

// The housekeeping prune drops a burst's creates once they are kKeep old,
// with no later Created or Fresh call.
TEST(RecentWrites, PruneDropsOnlyExpiredCreates) {
  RecentWrites recent;
  recent.Created("ns/x", json{{"metadata", {{"name", "x"}}}});
  const auto now = std::chrono::steady_clock::now();
  recent.Prune(now);
  EXPECT_EQ(recent.Size(), 1u);
  recent.Prune(now + RecentWrites::kKeep + std::chrono::seconds(1));
  EXPECT_EQ(recent.Size(), 0u);
}

}  // namespace
}  // namespace switchboard::operator_controller
