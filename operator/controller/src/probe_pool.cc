#include "probe_pool.h"

#include "switchboard/operator_logic/conditions.h"
#include "switchboard/operator_logic/time_util.h"
#include "switchboard/pubsub/connection_limit.h"

namespace switchboard::operator_controller {

KeyedJobs<ProbeJob, ProbeOutcome>::Ran RunProbeJob(
    const ProbeJob& job, const ProbePool::Prober& prober,
    const std::function<void(const std::string&)>& observe) {
  KeyedJobs<ProbeJob, ProbeOutcome>::Ran ran;
  ProbeOutcome& out = ran.outcome;
  out.fingerprint = job.fingerprint;
  auto r = prober(job.primary);
  if (r.ok()) {
    out.max_payload = r->server_max_payload;
  } else {
    out.primary = r.status();
    const auto code = r.status().code();
    if (job.fallback && (code == StatusCode::kUnauthenticated ||
                         code == StatusCode::kPermissionDenied || code == StatusCode::kTimeout)) {
      auto f = prober(*job.fallback);
      if (f.ok()) {
        out.fallback_ok = true;
        out.max_payload = f->server_max_payload;
      }
    }
  }
  if (observe) {
    observe(r.ok() ? std::string(operator_logic::reasons::kProbed)
                   : std::string(operator_logic::ProbeFailureReason(r.status().code(), false)));
  }
  out.at = std::chrono::steady_clock::now();
  if (!r.ok() && !out.fallback_ok && job.retry) {
    operator_logic::ProbeFailureFacts facts = *job.retry;
    facts.code = r.status().code();
    facts.probe_message = r.status().message();
    facts.server_connection_limit =
        pubsub::ConnectionLimitOf(r.status()) == pubsub::ConnectionLimit::kServer;
    facts.user_waiting = std::max(
        std::chrono::milliseconds(0),
        std::chrono::duration_cast<std::chrono::milliseconds>(out.at - job.credentials_since));
    ran.again_after = operator_logic::DecideProbeRetry(facts);
  }
  out.time = operator_logic::FormatTime(operator_logic::Clock::now());
  return ran;
}

ProbePool::ProbePool(int threads, std::function<void(const std::string&)> on_done,
                     std::function<void(const std::string&)> observe, Prober prober)
    : KeyedJobs(
          threads,
          [prober = std::move(prober), observe = std::move(observe)](const ProbeJob& job) {
            return RunProbeJob(job, prober, observe);
          },
          std::move(on_done)) {}

}  // namespace switchboard::operator_controller
