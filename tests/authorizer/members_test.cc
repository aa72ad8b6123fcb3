// PlanMembers: which servers one replica connects to, table by table.
#include "switchboard/authorizer/members.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace switchboard::authorizer {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Time = operator_logic::Time;

const Time kNow = Time{} + 1000h;
constexpr auto kForget = 30s;

MemberState M(std::string url, std::string id = "", std::optional<Time> since = std::nullopt) {
  return {.url = std::move(url), .server_id = std::move(id), .unwanted_since = since};
}

TEST(HostPortTest, DropsTheSchemeAndBlanks) {
  EXPECT_EQ(HostPort("nats://a:4222"), "a:4222");
  EXPECT_EQ(HostPort(" tls://a:4222/ "), "a:4222");
  EXPECT_EQ(HostPort("10.0.0.1:4222"), "10.0.0.1:4222");
  EXPECT_EQ(HostPort(""), "");
}

struct Case {
  std::string name;
  std::vector<std::string> seeds, discovered;
  std::vector<MemberState> members;
  std::map<std::string, std::string> aliases;
  std::vector<std::string> add, remove;
  std::map<std::string, std::string> want_aliases;
};

class PlanMembersTable : public ::testing::TestWithParam<Case> {};

TEST_P(PlanMembersTable, Plans) {
  const Case& c = GetParam();
  MemberPlan p = PlanMembers(c.seeds, c.discovered, c.members, c.aliases, kNow, kForget);
  EXPECT_EQ(p.add, c.add);
  EXPECT_EQ(p.remove, c.remove);
  EXPECT_EQ(p.aliases, c.want_aliases);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PlanMembersTable,
    ::testing::Values(
        Case{.name = "a_lone_server_is_its_seed",
             .seeds = {"nats://nats:4222"},
             .add = {"nats://nats:4222"}},
        Case{.name = "every_seed_and_every_announced_server",
             .seeds = {"nats://a:4222", "nats://b:4222"},
             .discovered = {"nats://b:4222", "nats://c:4222"},
             .add = {"nats://a:4222", "nats://b:4222", "nats://c:4222"}},
        Case{.name = "announced_urls_take_the_seeds_tls_scheme",
             .seeds = {"tls://nats:4222"},
             .discovered = {"nats://10.0.0.2:4222"},
             .add = {"tls://10.0.0.2:4222", "tls://nats:4222"}},
        Case{.name = "nothing_new_when_every_server_has_a_member",
             .seeds = {"nats://a:4222"},
             .discovered = {"nats://b:4222"},
             .members = {M("nats://a:4222", "NA"), M("nats://b:4222", "NB")}},
        Case{.name = "a_service_url_on_an_announced_server_gives_way",
             .seeds = {"nats://nats.svc:4222"},
             .discovered = {"nats://10.0.0.1:4222", "nats://10.0.0.2:4222"},
             .members = {M("nats://nats.svc:4222", "NA"), M("nats://10.0.0.1:4222", "NA"),
                         M("nats://10.0.0.2:4222", "NB")},
             .remove = {"nats://nats.svc:4222"},
             .want_aliases = {{"nats://nats.svc:4222", "NA"}}},
        Case{.name = "two_unannounced_urls_of_one_server_keep_the_smaller",
             .seeds = {"nats://b:4222", "nats://a:4222"},
             .members = {M("nats://a:4222", "NA"), M("nats://b:4222", "NA")},
             .remove = {"nats://b:4222"},
             .want_aliases = {{"nats://b:4222", "NA"}}},
        Case{.name = "an_alias_is_not_connected_again_while_its_server_has_a_member",
             .seeds = {"nats://nats.svc:4222"},
             .discovered = {"nats://10.0.0.1:4222"},
             .members = {M("nats://10.0.0.1:4222", "NA")},
             .aliases = {{"nats://nats.svc:4222", "NA"}},
             .want_aliases = {{"nats://nats.svc:4222", "NA"}}},
        Case{.name = "an_alias_of_a_restarted_server_is_tried_again",
             .seeds = {"nats://nats.svc:4222"},
             .discovered = {"nats://10.0.0.1:4222"},
             .members = {M("nats://10.0.0.1:4222", "NA2")},
             .aliases = {{"nats://nats.svc:4222", "NA"}},
             .add = {"nats://nats.svc:4222"}},
        Case{.name = "a_restarting_server_keeps_its_member_for_a_while",
             .seeds = {"nats://a:4222"},
             .members = {M("nats://a:4222", "NA"), M("nats://b:4222", "", kNow - 29s)}},
        Case{.name = "a_server_gone_long_enough_is_dropped",
             .seeds = {"nats://a:4222"},
             .members = {M("nats://a:4222", "NA"), M("nats://b:4222", "", kNow - 30s)},
             .remove = {"nats://b:4222"}},
        Case{.name = "a_connected_member_stays_though_unannounced",
             .seeds = {"nats://a:4222"},
             .members = {M("nats://a:4222", "NA"), M("nats://b:4222", "NB", kNow - 1h)}},
        Case{.name = "blank_urls_are_ignored", .seeds = {"", " "}, .discovered = {""}}),
    [](const auto& info) { return info.param.name; });

TEST(PlanMembersTest, UnwantedSinceStartsNowAndIsKept) {
  MemberPlan p = PlanMembers({"nats://a:4222"}, {}, {M("nats://a:4222"), M("nats://b:4222")}, {},
                             kNow, kForget);
  EXPECT_EQ(p.unwanted_since.at("nats://a:4222"), std::nullopt);
  EXPECT_EQ(p.unwanted_since.at("nats://b:4222"), kNow);
  p = PlanMembers({"nats://a:4222"}, {}, {M("nats://b:4222", "", kNow - 5s)}, {}, kNow, kForget);
  EXPECT_EQ(p.unwanted_since.at("nats://b:4222"), kNow - 5s);
  // Announced again: no longer unwanted.
  p = PlanMembers({"nats://a:4222"}, {"nats://b:4222"}, {M("nats://b:4222", "", kNow - 5s)}, {},
                  kNow, kForget);
  EXPECT_EQ(p.unwanted_since.at("nats://b:4222"), std::nullopt);
  EXPECT_THAT(p.remove, IsEmpty());
  EXPECT_THAT(p.add, ElementsAre("nats://a:4222"));
}

}  // namespace
}  // namespace switchboard::authorizer
