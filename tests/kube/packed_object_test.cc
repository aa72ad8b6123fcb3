// Packed cache objects: what goes in comes out, keys and versions read the
// same packed or not, and anything else is not mistaken for one.
#include "switchboard/kube/packed_object.h"

#include <gtest/gtest.h>

#include "switchboard/api/packed.h"
#include "switchboard/kube/store.h"

namespace switchboard::kube {
namespace {

TEST(PackedObject, RoundTripsAndKeepsKeyAndVersion) {
  struct Case {
    const char* what;
    json object;
    std::string key, version;
  };
  const std::vector<Case> cases = {
      {"namespaced",
       {{"metadata", {{"name", "b1"}, {"namespace", "team-a"}, {"resourceVersion", "42"}}},
        {"spec", {{"nats", {{"subjectPrefix", "hatchet.b1"}}}}}},
       "team-a/b1",
       "42"},
      {"cluster-scoped, no version",
       {{"metadata", {{"name", "ns1"}}}, {"kind", "Namespace"}},
       "ns1",
       ""},
      {"a packed member (api::Pack), numbers, bools, null, arrays, unicode",
       {{"metadata",
         {{"name", "s"},
          {"namespace", "n"},
          {"resourceVersion", "7"},
          {"ownerReferences", json::array({{{"uid", "u1"}}, {{"uid", "u2"}}})}}},
        {"data", api::Pack({{"username", "dXNlcg=="}})},
        {"n", -12},
        {"f", 1.5},
        {"big", 18446744073709551615u},
        {"t", true},
        {"z", nullptr},
        {"text", "h\u00e9llo \u2603"}},
       "n/s",
       "7"},
      {"empty object", json::object(), "", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const json packed = PackObject(c.object);
    EXPECT_TRUE(IsPackedObject(packed));
    EXPECT_EQ(UnpackObject(packed), c.object);
    EXPECT_EQ(CachedKeyOf(packed), c.key);
    EXPECT_EQ(CachedKeyOf(c.object), c.key);
    EXPECT_EQ(CachedVersionOf(packed), c.version);
    EXPECT_EQ(CachedVersionOf(c.object), c.version);
    EXPECT_THROW((void)packed.at("metadata"), json::type_error)
        << "a DOM read of a packed object must fail, not read nothing";
  }
}

TEST(PackedObject, OtherValuesAreNotPackedObjects) {
  const std::vector<json> values = {
      api::Pack({{"a", "b"}}),     // a packed member: binary, no subtype
      json::binary({1, 2, 3}, 7),  // another subtype
      json::object(),
      json::array(),
      "text",
      3,
      nullptr,
  };
  for (const json& v : values) {
    SCOPED_TRACE(v.dump());
    EXPECT_FALSE(IsPackedObject(v));
    EXPECT_EQ(UnpackObject(v), v) << "anything else is handed back as it is";
  }
}

TEST(PackedObject, CorruptBytesUnpackToNull) {
  const json packed = PackObject({{"metadata", {{"name", "x"}, {"resourceVersion", "1"}}}});
  std::vector<std::uint8_t> bytes = packed.get_binary();
  for (size_t cut : {size_t{0}, size_t{2}, size_t{5}, bytes.size() - 1}) {
    SCOPED_TRACE(cut);
    std::vector<std::uint8_t> truncated(bytes.begin(), bytes.begin() + cut);
    const json bad = json::binary(truncated, packed.get_binary().subtype());
    EXPECT_TRUE(UnpackObject(bad).is_null());
  }
  std::vector<std::uint8_t> huge_length = bytes;
  huge_length[3] = 0xff;  // the key's length far past the end
  const json bad = json::binary(huge_length, packed.get_binary().subtype());
  EXPECT_TRUE(UnpackObject(bad).is_null());
  EXPECT_EQ(CachedKeyOf(bad), "");
}

TEST(PackedObject, TheStoreKeysPackedObjectsAsUnpackedOnes) {
  auto obj = [](const std::string& name, const std::string& rv, const std::string& data) {
    return json{{"metadata", {{"namespace", "a"}, {"name", name}, {"resourceVersion", rv}}},
                {"data", data}};
  };
  Store s;
  std::vector<std::string> events;
  s.AddEventHandler({[&](const ObjectPtr& o) { events.push_back("add " + CachedKeyOf(*o)); },
                     [&](const ObjectPtr& a, const ObjectPtr& b) {
                       events.push_back("update " + CachedVersionOf(*a) + "->" +
                                        CachedVersionOf(*b));
                     },
                     [&](const ObjectPtr& o) { events.push_back("delete " + CachedKeyOf(*o)); }});
  s.Replace({PackObject(obj("x", "1", "cached")), PackObject(obj("y", "1", ""))});
  const ObjectPtr x = s.Get("a/x");
  ASSERT_TRUE(x);
  EXPECT_TRUE(IsPackedObject(*x)) << "handed out as kept";
  // A relist at the same version keeps the cached copy; a new version replaces it.
  s.Replace({PackObject(obj("x", "1", "listed")), PackObject(obj("y", "2", ""))});
  EXPECT_EQ(s.Get("a/x"), x);
  EXPECT_EQ(UnpackObject(*s.Get("a/x"))["data"], "cached");
  s.Upsert(PackObject(obj("z", "3", "")));
  s.Remove(PackObject(obj("y", "2", "")));
  EXPECT_EQ(s.Keys(), (std::vector<std::string>{"a/x", "a/z"}));
  EXPECT_EQ(events, (std::vector<std::string>{"add a/x", "add a/y", "update 1->2", "add a/z",
                                              "delete a/y"}));
}

}  // namespace
}  // namespace switchboard::kube
