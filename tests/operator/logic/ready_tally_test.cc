#include "switchboard/operator_logic/ready_tally.h"

#include <gtest/gtest.h>

#include "switchboard/operator_logic/packed.h"
#include "switchboard/testing/objects.h"

namespace switchboard::operator_logic {
namespace {

using nlohmann::json;

json Backend(const json& conditions) {
  return testing::BackendBuilder("ns", "b").Set("/status/conditions", conditions);
}

TEST(ReadyStateOf, ReadsTheStoredReadyCondition) {
  struct Case {
    const char* name;
    json backend;
    ReadyState want;
  };
  const json ready_true = {{"type", "Ready"}, {"status", "True"}, {"reason", "Probed"}};
  const json ready_false = {{"type", "Ready"}, {"status", "False"}, {"reason", "AuthFailed"}};
  const json probed = {{"type", "Probed"}, {"status", "True"}, {"reason", "Succeeded"}};
  json packed = Backend(json::array({ready_false}));
  packed["status"] = Pack(packed["status"]);
  const Case cases[] = {
      {"no status", {{"metadata", {{"name", "b"}}}}, {"Unknown", "NotReconciled"}},
      {"no Ready among the conditions",
       Backend(json::array({probed})),
       {"Unknown", "NotReconciled"}},
      {"Ready True", Backend(json::array({probed, ready_true})), {"True", "Probed"}},
      {"Ready False", Backend(json::array({ready_false})), {"False", "AuthFailed"}},
      {"status packed as the cache keeps it", packed, {"False", "AuthFailed"}},
      {"status not an object", {{"status", "x"}}, {"Unknown", "NotReconciled"}},
      {"a Ready without a status is no condition",
       Backend(json::array({{{"type", "Ready"}}})),
       {"Unknown", "NotReconciled"}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(ReadyStateOf(c.backend), c.want) << c.name;
  }
}

TEST(ReadyTally, CountsFollowAddsUpdatesAndDeletes) {
  const ReadyState ok{"True", "Probed"}, auth{"False", "AuthFailed"},
      fresh{"Unknown", "NotReconciled"};
  struct Step {
    const char* what;
    std::string key;
    std::optional<ReadyState> state;
    std::map<ReadyState, int> want;
  };
  const Step steps[] = {
      {"a new backend", "ns/a", fresh, {{fresh, 1}}},
      {"it becomes Ready", "ns/a", ok, {{fresh, 0}, {ok, 1}}},
      {"a second one fails", "ns/b", auth, {{fresh, 0}, {ok, 1}, {auth, 1}}},
      {"the same state again counts once", "ns/b", auth, {{fresh, 0}, {ok, 1}, {auth, 1}}},
      {"it recovers", "ns/b", ok, {{fresh, 0}, {ok, 2}, {auth, 0}}},
      {"one is deleted", "ns/a", std::nullopt, {{fresh, 0}, {ok, 1}, {auth, 0}}},
      {"a delete of an unknown key changes nothing",
       "ns/zz",
       std::nullopt,
       {{fresh, 0}, {ok, 1}, {auth, 0}}},
      {"the last one is deleted", "ns/b", std::nullopt, {{fresh, 0}, {ok, 0}, {auth, 0}}},
  };
  ReadyTally tally;
  for (const auto& s : steps) {
    tally.Set(s.key, s.state);
    EXPECT_EQ(tally.Counts(), s.want) << s.what;
  }
  EXPECT_EQ(tally.size(), 0u);
}

}  // namespace
}  // namespace switchboard::operator_logic
