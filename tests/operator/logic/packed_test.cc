// The one accessor for members a cache keeps packed: cached and API objects
// read alike, and reading a packed member as a DOM fails loudly.
#include "switchboard/operator_logic/packed.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace switchboard::operator_logic {
namespace {

using nlohmann::json;

json Bytes(const std::string& text) {
  return json::binary(std::vector<std::uint8_t>(text.begin(), text.end()));
}

TEST(Packed, PackHoldsTheTextAsBinary) {
  const json status = {{"conditions", json::array({{{"type", "Ready"}}})}};
  const json packed = Pack(status);
  EXPECT_TRUE(IsPacked(packed));
  EXPECT_FALSE(packed.is_string());
  EXPECT_FALSE(packed.is_object());
  EXPECT_EQ(packed.get_binary().size(), status.dump().size());
  EXPECT_FALSE(IsPacked(status));
  EXPECT_FALSE(IsPacked(json(status.dump())));
}

// The mistake the binary shape exists for: reading a cached object as if it
// came from the API throws instead of reading something else.
TEST(Packed, ReadingAPackedMemberAsADomThrows) {
  const json cached = {{"status", Pack({{"conditions", json::array()}})}};
  EXPECT_THROW((void)cached["status"]["conditions"], json::type_error);
  EXPECT_THROW((void)cached["status"].value("conditions", json::array()), json::type_error);
  EXPECT_THROW((void)cached.at("status").at("conditions"), json::type_error);
  EXPECT_THROW((void)cached["status"].get<std::string>(), json::type_error);
}

TEST(Packed, ObjectMemberTable) {
  struct Case {
    const char* name;
    json object;
    std::optional<json> want;
  };
  const json a1 = {{"a", 1}};
  const std::vector<Case> cases = {
      {"api object", {{"status", a1}}, a1},
      {"packed object", {{"status", Pack(a1)}}, a1},
      {"packed empty object", {{"status", Pack(json::object())}}, json::object()},
      {"absent", {{"spec", a1}}, json::object()},
      {"null", {{"status", nullptr}}, json::object()},
      {"a string is not unpacked", {{"status", a1.dump()}}, json::object()},
      {"an array", {{"status", json::array({1})}}, json::object()},
      {"not an object at all", json::array({1}), json::object()},
      {"packed array", {{"status", Pack(json::array({1}))}}, std::nullopt},
      {"packed garbage", {{"status", Bytes("{not json")}}, std::nullopt},
      {"packed nothing", {{"status", Bytes("")}}, std::nullopt},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(ObjectMember(c.object, "status"), c.want) << c.name;
    EXPECT_EQ(StatusOf(c.object), c.want.value_or(json::object())) << c.name;
  }
}

TEST(Packed, ApiShapedUnpacksEveryPackedMember) {
  const json api = {{"kind", "Secret"},
                    {"metadata", {{"name", "s"}}},
                    {"data", {{"k", "dg=="}}},
                    {"status", {{"phase", "x"}}}};
  json cached = api;
  cached["data"] = Pack(api["data"]);
  cached["status"] = Pack(api["status"]);
  EXPECT_EQ(ApiShaped(cached), api);
  EXPECT_EQ(ApiShaped(api), api);
  EXPECT_EQ(ApiShaped(json::array({1})), json::array({1}));
  EXPECT_EQ(ApiShaped(json{{"status", Bytes("{")}}), (json{{"status", nullptr}}));
}

}  // namespace
}  // namespace switchboard::operator_logic
