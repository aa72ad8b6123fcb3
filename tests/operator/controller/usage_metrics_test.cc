// UsageMetrics: the series follow the ledger's figures (counters grow by
// the difference, a reset starts again), one series set per installation
// summed over the NATS servers, an installation that is gone loses its
// series, and a NatsServer that is gone loses all of its own.
#include "usage_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

namespace switchboard::operator_controller {
namespace {

namespace logic = ::switchboard::operator_logic;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Text(prometheus::Registry& r) {
  return prometheus::TextSerializer().Serialize(r.Collect());
}

TEST(UsageMetrics, SeriesFollowTheFiguresAndGoWithTheirInstallation) {
  prometheus::Registry registry;
  UsageMetrics m(registry);
  std::map<logic::UsageKey, logic::ServerUsage> usage = {
      {{"team-a/hatchet", "nats-0"}, {3, 12, 4, {10, 30, 100, 300}, 1}},
      {{"team-b/hatchet", "nats-0"}, {1, 1, 1, {0, 0, 0, 0}, 0}}};
  std::map<std::string, logic::InstallationLimits, std::less<>> limits = {
      {"team-a/hatchet", {10, std::nullopt, std::nullopt}}};
  m.Export("nats/shared", usage, limits);
  m.ObserveCollection("nats/shared", 0.25, true);
  std::string t = Text(registry);
  EXPECT_THAT(
      t,
      HasSubstr("switchboard_installation_connections{name=\"hatchet\",namespace=\"team-a\"} 3"));
  EXPECT_THAT(t, HasSubstr("switchboard_installation_messages_out_total{name=\"hatchet\","
                           "namespace=\"team-a\"} 30"));
  EXPECT_THAT(t, HasSubstr("switchboard_installation_limit{limit=\"connections\",name=\"hatchet\","
                           "namespace=\"team-a\"} 10"));
  EXPECT_THAT(t, Not(HasSubstr("limit=\"subscriptions\"")));

  // Grows by the difference; b is deleted; a's limit is lifted.
  usage.erase({"team-b/hatchet", "nats-0"});
  usage[{"team-a/hatchet", "nats-0"}].traffic.msgs_out = 45;
  m.Export("nats/shared", usage, {});
  t = Text(registry);
  EXPECT_THAT(t, HasSubstr("switchboard_installation_messages_out_total{name=\"hatchet\","
                           "namespace=\"team-a\"} 45"));
  EXPECT_THAT(t, Not(HasSubstr("namespace=\"team-b\"")));
  EXPECT_THAT(t, Not(HasSubstr("switchboard_installation_limit{")));

  // The source reset (a STATZ server restarted): the counter takes it all.
  usage[{"team-a/hatchet", "nats-0"}].traffic.msgs_out = 5;
  m.Export("nats/shared", usage, {});
  EXPECT_THAT(Text(registry),
              HasSubstr("switchboard_installation_messages_out_total{name=\"hatchet\","
                        "namespace=\"team-a\"} 50"));

  m.Forget("nats/shared");
  t = Text(registry);
  EXPECT_THAT(t, Not(HasSubstr("namespace=\"team-a\"")));
  EXPECT_THAT(t, Not(HasSubstr("switchboard_usage_collection_seconds{")));
}

TEST(UsageMetrics, OneSeriesSetPerInstallationSummedOverTheNatsServers) {
  prometheus::Registry registry;
  UsageMetrics m(registry);
  std::map<logic::UsageKey, logic::ServerUsage> usage = {
      {{"team-a/hatchet", "nats-0"}, {3, 12, 4, {10, 30, 100, 300}, 1}},
      {{"team-a/hatchet", "nats-1"}, {2, 20, 11, {5, 7, 50, 70}, 0}}};
  m.Export("nats/shared", usage, {});
  std::string t = Text(registry);
  EXPECT_THAT(t, HasSubstr("switchboard_installation_connections{name=\"hatchet\","
                           "namespace=\"team-a\"} 5"));
  EXPECT_THAT(t, HasSubstr("switchboard_installation_subscriptions{name=\"hatchet\","
                           "namespace=\"team-a\"} 32"));
  EXPECT_THAT(
      t, HasSubstr("switchboard_installation_subscriptions_per_connection_max{name=\"hatchet\","
                   "namespace=\"team-a\"} 11"));
  EXPECT_THAT(t, HasSubstr("switchboard_installation_messages_in_total{name=\"hatchet\","
                           "namespace=\"team-a\"} 15"));
  EXPECT_THAT(t, Not(HasSubstr("server=")));

  // nats-1 restarted (its figures start again) and nats-0 moved on: the
  // counter grows by nats-0's difference plus everything nats-1 shows now.
  usage[{"team-a/hatchet", "nats-0"}].traffic.msgs_in = 12;
  usage[{"team-a/hatchet", "nats-1"}].traffic.msgs_in = 1;
  m.Export("nats/shared", usage, {});
  EXPECT_THAT(Text(registry),
              HasSubstr("switchboard_installation_messages_in_total{name=\"hatchet\","
                        "namespace=\"team-a\"} 18"));

  // The engines left nats-1 and came back later with more traffic there:
  // only what is new since nats-1 was last seen is added.
  usage.erase({"team-a/hatchet", "nats-1"});
  m.Export("nats/shared", usage, {});
  usage[{"team-a/hatchet", "nats-1"}] = {1, 1, 1, {4, 0, 0, 0}, 0};
  m.Export("nats/shared", usage, {});
  EXPECT_THAT(Text(registry),
              HasSubstr("switchboard_installation_messages_in_total{name=\"hatchet\","
                        "namespace=\"team-a\"} 21"));
}

}  // namespace
}  // namespace switchboard::operator_controller
