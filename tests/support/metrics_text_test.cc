#include "switchboard/testing/metrics_text.h"

#include <gtest/gtest.h>

namespace switchboard::testing {
namespace {

constexpr char kScrape[] =
    "# HELP switchboard_reconcile_total Reconciles.\n"
    "# TYPE switchboard_reconcile_total counter\n"
    "switchboard_reconcile_total{kind=\"PubSubBackend\",result=\"ok\"} 998\n"
    "switchboard_reconcile_total{kind=\"PubSubBackend\",result=\"error\"} 2\n"
    "switchboard_reconcile_total{kind=\"NatsServer\",result=\"ok\"} 5\n"
    "switchboard_reconcile_total_x{kind=\"PubSubBackend\"} 1000\n"
    "switchboard_leader 1\n"
    "switchboard_usage_collection_seconds{namespace=\"a\",name=\"bench\"} 0.25";  // no newline

TEST(MetricSum, SumsTheSamplesWhoseLabelsMatch) {
  struct Case {
    const char* name;
    const char* label;
    double want;
  } cases[] = {
      {"switchboard_reconcile_total", "kind=\"PubSubBackend\"", 1000},
      {"switchboard_reconcile_total", "", 1005},
      {"switchboard_reconcile_total", "result=\"error\"", 2},
      {"switchboard_leader", "", 1},
      {"switchboard_usage_collection_seconds", "namespace=\"a\"", 0.25},
      {"switchboard_reconcile", "", 0},  // a prefix of a name is not the name
      {"switchboard_missing", "", 0},
      {"switchboard_reconcile_total", "kind=\"Nope\"", 0},
  };
  for (const auto& c : cases) {
    EXPECT_DOUBLE_EQ(MetricSum(kScrape, c.name, c.label), c.want) << c.name << " " << c.label;
  }
  EXPECT_DOUBLE_EQ(MetricSum("", "switchboard_leader"), 0);
}

}  // namespace
}  // namespace switchboard::testing
