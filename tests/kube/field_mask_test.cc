// Parse-time masks: the masked parse is the whole parse with only the kept
// members, for objects, list pages and watch events.
#include "switchboard/kube/field_mask.h"

#include <gtest/gtest.h>

#include "switchboard/kube/watch.h"

namespace switchboard::kube {
namespace {

// What the mask keeps, computed on the whole document: the reference the
// masked parse must equal.
json KeepOnly(const json& value, const FieldMask::Node* node) {
  if (node == nullptr) return json();
  if (node->all) return value;
  if (value.is_array()) {
    json out = json::array();
    for (const json& e : value) out.push_back(KeepOnly(e, node));
    return out;
  }
  if (!value.is_object()) return value;
  json out = json::object();
  for (auto it = value.begin(); it != value.end(); ++it) {
    auto c = node->children.find(it.key());
    if (c != node->children.end()) {
      out[it.key()] = KeepOnly(it.value(), &c->second);
    } else if (node->others) {
      out[it.key()] = it.value();
    }
  }
  return out;
}

const json kSecret = {
    {"apiVersion", "v1"},
    {"kind", "Secret"},
    {"metadata",
     {{"name", "b1-nats-credentials"},
      {"namespace", "team-a"},
      {"resourceVersion", "42"},
      {"labels", {{"app.kubernetes.io/managed-by", "switchboard"}, {"other", "x"}}},
      {"ownerReferences",
       json::array({{{"uid", "u1"}, {"kind", "PubSubBackend"}, {"controller", true}},
                    {{"uid", "u2"}, {"name", "n"}}})},
      {"managedFields",
       json::array({{{"manager", "m"}, {"fieldsV1", {{"f:data", {{"f:x", json::object()}}}}}}})}}},
    {"data", {{"username", "dXNlcg=="}, {"password", "cHc="}}},
    {"type", "Opaque"},
    {"list", json::array({1, json::array({2, 3}), {{"deep", {{"er", 4}}}}})},
};

TEST(FieldMask, MaskedParseKeepsExactlyTheMaskedMembers) {
  struct Case {
    const char* what;
    FieldMask mask;
  };
  const std::vector<Case> cases = {
      {"everything (no mask)", FieldMask()},
      {"nothing", FieldMask::Keep({})},
      {"one member whole", FieldMask::Keep({{"data"}})},
      {"nested members", FieldMask::Keep({{"metadata", "name"}, {"metadata", "resourceVersion"}})},
      {"one label by a key with dots and slashes",
       FieldMask::Keep({{"metadata", "labels", "app.kubernetes.io/managed-by"}})},
      {"through an array of objects", FieldMask::Keep({{"metadata", "ownerReferences", "uid"}})},
      {"through nested arrays", FieldMask::Keep({{"list", "deep", "er"}})},
      {"a whole path and a longer one under it (the whole wins)",
       FieldMask::Keep({{"metadata", "labels", "other"}, {"metadata"}})},
      {"absent members", FieldMask::Keep({{"status", "conditions"}, {"metadata", "nope"}})},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string text = kSecret.dump();
    const json expect = c.mask.keeps_everything() ? kSecret : KeepOnly(kSecret, c.mask.root());
    EXPECT_EQ(ParseMasked(text, c.mask), expect);
    // As a list page's items and a watch event's object; the rest whole.
    const json page = {{"kind", "SecretList"},
                       {"metadata", {{"resourceVersion", "9"}, {"continue", "c"}}},
                       {"items", json::array({kSecret, kSecret})}};
    json page_expect = page;
    page_expect["items"] = json::array({expect, expect});
    EXPECT_EQ(ParseMasked(page.dump(), c.mask, "items"), page_expect);
    const json event = {{"type", "MODIFIED"}, {"object", kSecret}};
    auto ev = ParseWatchEvent(event.dump(), &c.mask);
    ASSERT_TRUE(ev.ok());
    EXPECT_EQ(ev->type, WatchEventType::kModified);
    EXPECT_EQ(ev->object, expect);
  }
  // The paths as written.
  EXPECT_EQ(
      ParseMasked(kSecret.dump(), FieldMask::Keep({{"metadata", "ownerReferences", "uid"}})),
      (json{{"metadata", {{"ownerReferences", json::array({{{"uid", "u1"}}, {{"uid", "u2"}}})}}}}));
}

TEST(FieldMask, NotJsonIsDiscardedAndAnErrorEventStillParses) {
  const FieldMask m = FieldMask::Keep({{"metadata", "name"}});
  EXPECT_TRUE(ParseMasked("{\"metadata\": {\"name\": ", m).is_discarded());
  EXPECT_TRUE(ParseMasked("not json", m, "items").is_discarded());
  // An ERROR event's object is a Status: never masked, so the watcher
  // sees its code (410 Gone is what makes it relist).
  auto ev = ParseWatchEvent(
      R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}})", &m);
  ASSERT_TRUE(ev.ok());
  EXPECT_EQ(ev->type, WatchEventType::kError);
  EXPECT_EQ(ev->error.code(), StatusCode::kGone) << ev->error.message();
  EXPECT_EQ(ev->object.value("code", 0), 410);
}

}  // namespace
}  // namespace switchboard::kube
