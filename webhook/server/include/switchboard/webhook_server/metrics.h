// Prometheus metrics of the webhook (prometheus-cpp):
//   switchboard_webhook_requests_total{webhook,kind,operation,result}
//   switchboard_webhook_request_duration_seconds{webhook}   (histogram)
//   switchboard_webhook_rejected_requests_total{reason}     (413, 404 ...)
//   switchboard_webhook_certificate_reloads_total{result}
//   switchboard_webhook_open_connections                  (gauge)
//   switchboard_webhook_certificate_expiration_timestamp_seconds  (gauge: notAfter of
//     the certificate served now, set at start and after every reload)
// Label values are normalised by the admission decision (kind is
// PubSubBackend|NatsServer|other ...), so hostile requests cannot blow up
// the number of series. Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "switchboard/webhook_admission/admission.h"

namespace prometheus {
class Registry;
}

namespace switchboard::webhook_server {

class Metrics {
 public:
  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  void ObserveReview(webhook_admission::Webhook webhook, const webhook_admission::Outcome& outcome,
                     double seconds);
  void ObserveRejected(const std::string& reason);
  void ObserveCertReload(bool ok);
  void SetCertificateExpiry(int64_t not_after_epoch_seconds);
  void ConnectionOpened();
  void ConnectionClosed();

  // Prometheus text exposition format of everything above.
  std::string Serialize() const;
  std::shared_ptr<prometheus::Registry> registry() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace switchboard::webhook_server
