// What the webhook answers to one complete HTTP request: routing, the
// admission decision, health, readiness, metrics, and the JSON error bodies
// for refused requests. No sockets, so the fuzz target drives it together
// with RequestReader. Thread-safe (const; Metrics is thread-safe).
#pragma once

#include <string>

#include "http_reader.h"
#include "switchboard/webhook_admission/context_source.h"
#include "switchboard/webhook_server/metrics.h"

namespace switchboard::webhook_server {

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

class RequestHandler {
 public:
  // `context` and `metrics` must outlive the handler. `max_body_bytes` is
  // only quoted in the 413 message (the reader enforces it).
  RequestHandler(size_t max_body_bytes, const webhook_admission::ContextSource& context,
                 Metrics& metrics);

  // POST /validate, POST /mutate, GET /healthz, /readyz, /metrics; 404 for
  // other paths, 405 for other methods. `remote` is only logged.
  HttpResponse Handle(const HttpRequest& request, const std::string& remote) const;

  // The answer to a request the reader refused (400, 413, 431), or to one
  // that missed its deadline (408, reason "request_timeout").
  HttpResponse Refused(const HttpRefusal& refusal, const std::string& remote) const;

 private:
  HttpResponse Review(webhook_admission::Webhook webhook, const HttpRequest& request,
                      const std::string& remote) const;
  HttpResponse Reject(int status, const std::string& reason, const std::string& message,
                      const std::string& path, const std::string& remote) const;

  size_t max_body_bytes_;
  const webhook_admission::ContextSource* context_;
  Metrics* metrics_;
};

}  // namespace switchboard::webhook_server
