// RetryTimingFor: every retry and wait figure of the operator from the
// facts it is configured with, as a table.
#include "switchboard/operator_logic/retry_timing.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "switchboard/operator_logic/backend_policy.h"

namespace switchboard::operator_logic {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

struct Case {
  std::string name;
  RetryTimingFacts facts;
  milliseconds failure_retry;
  milliseconds server_ca_retry;
};

TEST(RetryTimingFor, FollowsTheConfiguredIntervalsBelowTheirCeilings) {
  const std::vector<Case> cases = {
      {"defaults: a 5m probe interval and a 30s recheck wait the ceiling",
       {minutes(5), seconds(30)},
       seconds(10),
       seconds(10)},
      {"a probe interval below the ceiling is the failure retry",
       {seconds(3), seconds(30)},
       seconds(3),
       seconds(10)},
      {"a recheck below the ceiling is the server's CA retry",
       {minutes(5), seconds(4)},
       seconds(10),
       seconds(4)},
      {"exactly at the ceiling", {seconds(10), seconds(10)}, seconds(10), seconds(10)},
      {"both below", {milliseconds(200), milliseconds(300)}, milliseconds(200), milliseconds(300)},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const RetryTiming t = RetryTimingFor(c.facts);
    EXPECT_EQ(t.failure_retry, c.failure_retry);
    EXPECT_EQ(t.server_ca_retry, c.server_ca_retry);
    // What no setting changes.
    EXPECT_EQ(t.reload_retry, milliseconds(500));
    EXPECT_EQ(t.authorizer_sync, seconds(5));
    EXPECT_EQ(t.config_write_wait, seconds(2));
    EXPECT_EQ(t.backend_ca_retry, seconds(10));
  }
}

TEST(RetryTimingFor, AccountResyncNeverLaterThanTheAuthorizerRecheck) {
  struct Row {
    std::string name;
    milliseconds recheck, resync, retry;
  };
  const std::vector<Row> rows = {
      {"default recheck: the ceilings", seconds(30), seconds(5), seconds(2)},
      {"a recheck between the two", seconds(3), seconds(3), seconds(2)},
      {"a short recheck (tests) is both", milliseconds(200), milliseconds(200), milliseconds(200)},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    const RetryTiming t = RetryTimingFor({minutes(5), r.recheck});
    EXPECT_EQ(t.account_resync, r.resync);
    EXPECT_EQ(t.account_sync_retry, r.retry);
  }
}

// A ProbeFailureFacts, ThroughAuthorizers or ProbeFacts built without the
// controller's timing (as the policy's own tables build them) decides with
// the operator's figures at its default settings; the retries grow from
// the first one to their ceilings.
TEST(RetryTimingFor, TheProbePolicysDefaultsAreTheOperatorsFigures) {
  const RetryTiming t = RetryTimingFor({minutes(5), seconds(30)});
  const ProbeFailureFacts failure;
  EXPECT_EQ(failure.reload_retry, t.reload_retry);
  EXPECT_EQ(failure.failure_retry, t.failure_retry);
  const ThroughAuthorizers authorizers;
  EXPECT_EQ(authorizers.authorizer_sync, t.authorizer_sync);
  EXPECT_EQ(authorizers.authorizer_patience, minutes(1));
  EXPECT_EQ(authorizers.callout_retry, seconds(2));
  EXPECT_EQ(ProbeFacts{}.failure.reload_retry, t.reload_retry);
  EXPECT_LT(timing::kReloadRetry, timing::kCalloutRetryMax);
  EXPECT_LT(timing::kCalloutRetryMax, timing::kReloadRetryMax);
  EXPECT_LT(timing::kAuthorizerSync, timing::kAuthorizerPatience);
}

TEST(ServerReconcileSpacing, FourTimesTheLastReconcileBetweenTheFloorAndTheInterval) {
  struct Row {
    std::string name;
    milliseconds last_took, ceiling, spacing;
  };
  const std::vector<Row> rows = {
      {"never ran (0): the floor", milliseconds(0), seconds(1), milliseconds(100)},
      {"a quick reconcile (a few installations): the floor", milliseconds(5), seconds(1),
       milliseconds(100)},
      {"at the floor exactly", milliseconds(25), seconds(1), milliseconds(100)},
      {"between: four times", milliseconds(60), seconds(1), milliseconds(240)},
      {"just under the interval", milliseconds(249), seconds(1), milliseconds(996)},
      {"a slow one (many installations): the interval", milliseconds(400), seconds(1), seconds(1)},
      {"longer than anything: no overflow", milliseconds::max(), seconds(1), seconds(1)},
      {"an interval below the floor (tests) wins", milliseconds(0), milliseconds(50),
       milliseconds(50)},
      {"a longer interval lets it grow", milliseconds(2000), seconds(30), seconds(8)},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    EXPECT_EQ(ServerReconcileSpacing(r.last_took, r.ceiling), r.spacing);
  }
}

}  // namespace
}  // namespace switchboard::operator_logic
