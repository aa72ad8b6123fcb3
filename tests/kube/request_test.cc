// Request building is pure: paths, query parameters, bodies, content types.
#include "switchboard/kube/request.h"

#include <gtest/gtest.h>

namespace switchboard::kube {
namespace {

TEST(ResourcePath, Table) {
  struct Case {
    ResourceRef r;
    std::string ns, name, sub, want;
  };
  const Case cases[] = {
      {resources::Secret(), "ns", "x", "", "/api/v1/namespaces/ns/secrets/x"},
      {resources::Secret(), "", "", "", "/api/v1/secrets"},  // all namespaces
      {resources::Secret(), "ns", "", "", "/api/v1/namespaces/ns/secrets"},
      {resources::Namespace(), "ignored", "team-a", "", "/api/v1/namespaces/team-a"},
      {resources::Lease(), "kube-system", "op", "",
       "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/op"},
      {resources::PubSubBackend(), "a", "b", "status",
       "/apis/pubsub.switchboard.dev/v1alpha1/namespaces/a/pubsubbackends/b/status"},
      {resources::NatsServer(), "nats", "", "",
       "/apis/pubsub.switchboard.dev/v1alpha1/namespaces/nats/natsservers"},
      {resources::ServiceAccount(), "a", "sa", "token",
       "/api/v1/namespaces/a/serviceaccounts/sa/token"},
      {resources::EventsV1(), "a", "", "", "/apis/events.k8s.io/v1/namespaces/a/events"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(request::ResourcePath(c.r, c.ns, c.name, c.sub), c.want) << c.want;
  }
}

TEST(ResourceRef, ApiVersionAndGroupResource) {
  EXPECT_EQ(resources::Secret().ApiVersion(), "v1");
  EXPECT_EQ(resources::PubSubBackend().ApiVersion(), "pubsub.switchboard.dev/v1alpha1");
  EXPECT_EQ(resources::PubSubBackend().kind, "PubSubBackend");
  EXPECT_EQ(resources::NatsServer().GroupResource(), "natsservers.pubsub.switchboard.dev");
  EXPECT_FALSE(resources::Namespace().namespaced);
  EXPECT_EQ(resources::Lease(), resources::Lease());
}

TEST(QueryEscape, KeepsUnreservedEscapesTheRest) {
  EXPECT_EQ(request::QueryEscape("a-b_c.d~e"), "a-b_c.d~e");
  EXPECT_EQ(request::QueryEscape("app=x,tier!=db"), "app%3Dx%2Ctier%21%3Ddb");
  EXPECT_EQ(request::QueryEscape("a b/c"), "a%20b%2Fc");
}

TEST(List, QueryParameters) {
  ListOptions o;
  o.label_selector = "app=x";
  o.field_selector = "metadata.name=y";
  o.limit = 2;
  o.continue_token = "abc=";
  auto r = request::List(resources::Secret(), "ns", o);
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.path,
            "/api/v1/namespaces/ns/secrets?labelSelector=app%3Dx&fieldSelector=metadata.name%3Dy&"
            "limit=2&continue=abc%3D");
  EXPECT_TRUE(r.body.empty());
  EXPECT_EQ(request::List(resources::Secret(), "ns", {}).path, "/api/v1/namespaces/ns/secrets");
}

TEST(Watch, QueryParameters) {
  WatchOptions o;
  o.resource_version = "42";
  o.timeout_seconds = 60;
  auto r = request::Watch(resources::PubSubBackend(), "", o);
  EXPECT_EQ(r.path,
            "/apis/pubsub.switchboard.dev/v1alpha1/pubsubbackends?watch=true&resourceVersion=42&"
            "allowWatchBookmarks=true&timeoutSeconds=60");
  o.allow_watch_bookmarks = false;
  o.resource_version.clear();
  o.timeout_seconds = 0;
  EXPECT_EQ(request::Watch(resources::Secret(), "a", o).path,
            "/api/v1/namespaces/a/secrets?watch=true");
}

TEST(Create, NamespaceFromObjectAndWriteParams) {
  json obj = {
      {"apiVersion", "v1"}, {"kind", "Secret"}, {"metadata", {{"name", "s"}, {"namespace", "n"}}}};
  WriteOptions w;
  w.field_manager = "op";
  w.dry_run = true;
  auto r = request::Create(resources::Secret(), "", obj, w);
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.path, "/api/v1/namespaces/n/secrets?dryRun=All&fieldManager=op");
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(json::parse(r.body), obj);
}

TEST(Update, PutToObjectPathAndStatus) {
  json obj = {{"metadata", {{"name", "b"}, {"namespace", "a"}, {"resourceVersion", "7"}}}};
  EXPECT_EQ(request::Update(resources::PubSubBackend(), obj, {}).path,
            "/apis/pubsub.switchboard.dev/v1alpha1/namespaces/a/pubsubbackends/b");
  auto s = request::Update(resources::PubSubBackend(), obj, {}, "status");
  EXPECT_EQ(s.method, "PUT");
  EXPECT_EQ(s.path, "/apis/pubsub.switchboard.dev/v1alpha1/namespaces/a/pubsubbackends/b/status");
}

TEST(Patch, ContentTypesTable) {
  EXPECT_EQ(request::PatchContentType(PatchType::kMerge), "application/merge-patch+json");
  EXPECT_EQ(request::PatchContentType(PatchType::kJson), "application/json-patch+json");
  EXPECT_EQ(request::PatchContentType(PatchType::kStrategicMerge),
            "application/strategic-merge-patch+json");
  EXPECT_EQ(request::PatchContentType(PatchType::kApply), "application/apply-patch+yaml");
}

TEST(Patch, RejectsWrongShapes) {
  auto bad_json =
      request::Patch(resources::Secret(), "a", "b", PatchType::kJson, json::object(), {});
  ASSERT_FALSE(bad_json.ok());
  EXPECT_EQ(bad_json.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_json.status().message().find("array"), std::string::npos);
  EXPECT_FALSE(
      request::Patch(resources::Secret(), "a", "b", PatchType::kMerge, json::array(), {}).ok());
  EXPECT_FALSE(
      request::Patch(resources::Secret(), "a", "", PatchType::kMerge, json::object(), {}).ok());
  auto no_manager =
      request::Patch(resources::Secret(), "a", "b", PatchType::kApply, json::object(), {});
  EXPECT_FALSE(no_manager.ok());
}

TEST(Patch, JsonPatchToStatus) {
  PatchOptions o;
  o.subresource = "status";
  auto r = request::Patch(resources::PubSubBackend(), "a", "b", PatchType::kJson,
                          json::array({{{"op", "add"}, {"path", "/status"}, {"value", 1}}}), o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->method, "PATCH");
  EXPECT_EQ(r->path, "/apis/pubsub.switchboard.dev/v1alpha1/namespaces/a/pubsubbackends/b/status");
  EXPECT_EQ(r->content_type, "application/json-patch+json");
}

TEST(Apply, BuildsServerSideApply) {
  json obj = {
      {"apiVersion", "v1"}, {"kind", "Secret"}, {"metadata", {{"name", "s"}, {"namespace", "n"}}}};
  ApplyOptions o;
  o.field_manager = "switchboard-operator";
  o.force = true;
  auto r = request::Apply(resources::Secret(), obj, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->method, "PATCH");
  EXPECT_EQ(r->content_type, "application/apply-patch+yaml");
  EXPECT_EQ(r->path, "/api/v1/namespaces/n/secrets/s?fieldManager=switchboard-operator&force=true");
  auto st = request::Apply(resources::Secret(), obj, o, "status");
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->path,
            "/api/v1/namespaces/n/secrets/s/status?fieldManager=switchboard-operator&force=true");
}

TEST(Apply, ValidationErrorsNameTheField) {
  ApplyOptions o;
  struct Case {
    json obj;
    std::string want;
  };
  const Case cases[] = {
      {json::array(), "JSON object"},
      {{{"metadata", {{"name", "s"}, {"namespace", "n"}}}}, "apiVersion and kind"},
      {{{"apiVersion", "v1"}, {"kind", "Secret"}, {"metadata", {{"namespace", "n"}}}},
       "metadata.name"},
      {{{"apiVersion", "v1"}, {"kind", "Secret"}, {"metadata", {{"name", "s"}}}},
       "metadata.namespace"},
  };
  for (const auto& c : cases) {
    auto r = request::Apply(resources::Secret(), c.obj, o);
    ASSERT_FALSE(r.ok()) << c.want;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.want), std::string::npos) << r.status().message();
  }
  // Cluster-scoped resources need no namespace.
  json ns_obj = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "x"}}}};
  EXPECT_TRUE(request::Apply(resources::Namespace(), ns_obj, o).ok());
}

TEST(Delete, PreconditionsAndPropagation) {
  DeleteOptions o;
  o.precondition_uid = "u-1";
  o.precondition_resource_version = "9";
  o.propagation_policy = PropagationPolicy::kForeground;
  o.grace_period_seconds = 0;
  auto r = request::Delete(resources::Secret(), "a", "b", o);
  EXPECT_EQ(r.method, "DELETE");
  EXPECT_EQ(r.path, "/api/v1/namespaces/a/secrets/b");
  json body = json::parse(r.body);
  EXPECT_EQ(body["kind"], "DeleteOptions");
  EXPECT_EQ(body["preconditions"]["uid"], "u-1");
  EXPECT_EQ(body["preconditions"]["resourceVersion"], "9");
  EXPECT_EQ(body["propagationPolicy"], "Foreground");
  EXPECT_EQ(body["gracePeriodSeconds"], 0);
  json plain = json::parse(request::Delete(resources::Secret(), "a", "b", {}).body);
  EXPECT_FALSE(plain.contains("preconditions"));
  EXPECT_FALSE(plain.contains("propagationPolicy"));
}

TEST(ObjectKey, RoundTrip) {
  json obj = {{"metadata", {{"name", "b"}, {"namespace", "a"}}}};
  EXPECT_EQ(ObjectKeyOf(obj), "a/b");
  EXPECT_EQ(ObjectKey("", "cluster-wide"), "cluster-wide");
  std::string ns, name;
  SplitObjectKey("a/b", &ns, &name);
  EXPECT_EQ(ns, "a");
  EXPECT_EQ(name, "b");
  SplitObjectKey("solo", &ns, &name);
  EXPECT_EQ(ns, "");
  EXPECT_EQ(name, "solo");
  EXPECT_EQ(NameOf(json::array()), "");
  EXPECT_EQ(ResourceVersionOf({{"metadata", {{"resourceVersion", 5}}}}), "");  // not a string
}

}  // namespace
}  // namespace switchboard::kube
