-- wrk script: POST the same AdmissionReview to /validate over keep-alive.
-- REVIEW_BODY names the file with the review (bench_webhook_server --serve
-- writes it).
wrk.method = "POST"
wrk.path = "/validate"
wrk.headers["Content-Type"] = "application/json"
local f = assert(io.open(os.getenv("REVIEW_BODY"), "r"))
wrk.body = f:read("*a")
f:close()

done = function(summary, latency, requests)
  local seconds = summary.duration / 1e6
  io.write(string.format(
    "wrk: %.0f reviews/s  p50 %.0f us  p90 %.0f us  p99 %.0f us  p99.9 %.0f us  max %.0f us  non-2xx %d  errors %d  requests %d\n",
    summary.requests / seconds, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency:percentile(99.9), latency.max,
    summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.requests))
end
