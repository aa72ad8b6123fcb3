#include "switchboard/operator_logic/retry_timing.h"

#include <algorithm>

namespace switchboard::operator_logic {

RetryTiming RetryTimingFor(const RetryTimingFacts& facts) {
  RetryTiming t;
  t.reload_retry = timing::kReloadRetry;
  t.failure_retry = std::min(facts.probe_interval, timing::kFailureRetryMax);
  t.authorizer_sync = timing::kAuthorizerSync;
  t.config_write_wait = timing::kConfigWriteRecheck;
  t.backend_ca_retry = timing::kFailureRetryMax;
  t.server_ca_retry = std::min(facts.authorizer_recheck, timing::kFailureRetryMax);
  // The same run asks whether authorizers are subscribed: never later than
  // that recheck.
  t.account_resync = std::min(facts.authorizer_recheck, timing::kAccountResync);
  t.account_sync_retry = std::min(facts.authorizer_recheck, timing::kCalloutRetryMax);
  return t;
}

std::chrono::milliseconds ServerReconcileSpacing(std::chrono::milliseconds last_took,
                                                 std::chrono::milliseconds ceiling) {
  const auto floor = std::min(timing::kServerSpacingFloor, ceiling);
  const auto scaled = last_took.count() > ceiling.count() / timing::kServerSpacingFactor
                          ? ceiling
                          : last_took * timing::kServerSpacingFactor;
  return std::clamp(scaled, floor, ceiling);
}

}  // namespace switchboard::operator_logic
