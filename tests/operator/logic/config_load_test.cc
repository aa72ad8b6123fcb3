#include "switchboard/operator_logic/config_load.h"

#include <gtest/gtest.h>

namespace switchboard::operator_logic {
namespace {

using std::chrono::milliseconds;

struct Case {
  const char* name;
  ConfigLoadFacts facts;
  ConfigLoad want;
};

ConfigLoadFacts Facts(std::string reported, std::optional<uint64_t> reported_order,
                      uint64_t user_order, int waiting_ms = 0) {
  ConfigLoadFacts f;
  f.reported_hash = std::move(reported);
  f.current_hash = "sha256:cur";
  f.reported_order = reported_order;
  f.user_order = user_order;
  f.user_waiting = milliseconds(waiting_ms);
  f.patience = milliseconds(30000);
  return f;
}

TEST(DecideConfigLoad, Table) {
  const Case cases[] = {
      {"no reloader reports: probe as before", Facts("", std::nullopt, 3), ConfigLoad::kUnknown},
      {"the current content is loaded", Facts("sha256:cur", std::nullopt, 3), ConfigLoad::kLoaded},
      {"a later config than the user's is loaded", Facts("sha256:old", 5, 3), ConfigLoad::kLoaded},
      {"the user's own config is loaded", Facts("sha256:old", 3, 3), ConfigLoad::kLoaded},
      {"an earlier config is loaded: wait", Facts("sha256:old", 2, 3), ConfigLoad::kPending},
      {"still waiting just before the patience runs out", Facts("sha256:old", 2, 3, 29999),
       ConfigLoad::kPending},
      {"a report stuck behind for longer than the patience is not believed",
       Facts("sha256:old", 2, 3, 30000), ConfigLoad::kUnknown},
      {"a config this process never saw (loaded before a restart)",
       Facts("sha256:before-restart", std::nullopt, 1), ConfigLoad::kUnknown},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(DecideConfigLoad(c.facts), c.want) << c.name;
  }
}

}  // namespace
}  // namespace switchboard::operator_logic
