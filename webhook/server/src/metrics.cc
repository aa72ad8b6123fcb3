#include "switchboard/webhook_server/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "switchboard/kube/endpoints_server.h"

namespace switchboard::webhook_server {

struct Metrics::Impl {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  prometheus::Family<prometheus::Counter>& requests =
      prometheus::BuildCounter()
          .Name("switchboard_webhook_requests_total")
          .Help(
              "Admission reviews answered, by webhook, kind, operation and result "
              "(allowed, denied, error)")
          .Register(*registry);
  prometheus::Family<prometheus::Histogram>& duration =
      prometheus::BuildHistogram()
          .Name("switchboard_webhook_request_duration_seconds")
          .Help("Time to decide one admission review (parse, judge, encode)")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& rejected =
      prometheus::BuildCounter()
          .Name("switchboard_webhook_rejected_requests_total")
          .Help("HTTP requests refused before any review, by reason")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& reloads =
      prometheus::BuildCounter()
          .Name("switchboard_webhook_certificate_reloads_total")
          .Help("Serving certificate reloads after a file change, by result")
          .Register(*registry);
  prometheus::Gauge& open_connections = prometheus::BuildGauge()
                                            .Name("switchboard_webhook_open_connections")
                                            .Help("HTTPS connections open right now")
                                            .Register(*registry)
                                            .Add({});
  prometheus::Gauge& not_after =
      prometheus::BuildGauge()
          .Name("switchboard_webhook_certificate_expiration_timestamp_seconds")
          .Help("notAfter of the serving certificate served now, in seconds since the epoch")
          .Register(*registry)
          .Add({});
  prometheus::Histogram* duration_validate = nullptr;
  prometheus::Histogram* duration_mutate = nullptr;
};

Metrics::Metrics() : impl_(std::make_unique<Impl>()) {
  const prometheus::Histogram::BucketBoundaries buckets = {
      0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1};
  impl_->duration_validate = &impl_->duration.Add({{"webhook", "validate"}}, buckets);
  impl_->duration_mutate = &impl_->duration.Add({{"webhook", "mutate"}}, buckets);
}

Metrics::~Metrics() = default;

void Metrics::ObserveReview(webhook_admission::Webhook webhook,
                            const webhook_admission::Outcome& outcome, double seconds) {
  bool validating = webhook == webhook_admission::Webhook::kValidating;
  impl_->requests
      .Add({{"webhook", validating ? "validate" : "mutate"},
            {"kind", outcome.kind},
            {"operation", outcome.operation},
            {"result", outcome.result}})
      .Increment();
  (validating ? impl_->duration_validate : impl_->duration_mutate)->Observe(seconds);
}

void Metrics::ObserveRejected(const std::string& reason) {
  impl_->rejected.Add({{"reason", reason}}).Increment();
}

void Metrics::ObserveCertReload(bool ok) {
  impl_->reloads.Add({{"result", ok ? "ok" : "error"}}).Increment();
}

void Metrics::SetCertificateExpiry(int64_t not_after_epoch_seconds) {
  impl_->not_after.Set(static_cast<double>(not_after_epoch_seconds));
}

void Metrics::ConnectionOpened() { impl_->open_connections.Increment(); }

void Metrics::ConnectionClosed() { impl_->open_connections.Decrement(); }

std::string Metrics::Serialize() const { return kube::MetricsText(*impl_->registry); }

std::shared_ptr<prometheus::Registry> Metrics::registry() const { return impl_->registry; }

}  // namespace switchboard::webhook_server
