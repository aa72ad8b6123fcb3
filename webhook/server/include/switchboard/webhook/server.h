// The HTTPS admission server (cpp-httplib over OpenSSL, TLS 1.2 or newer).
//
//   POST /validate   validating webhook: allowed/denied, warnings
//   POST /mutate     mutating webhook: schema defaults as a JSON Patch
//   GET  /healthz    200 while the process serves
//   GET  /readyz     200 once the object cache has synced, else 503
//   GET  /metrics    Prometheus text format
//
// Request bodies above max_body_bytes get 413 with a message naming the
// limit and the flag. The certificate is reloaded when its files change
// (CertReloader). Requests run on a pool of worker threads, one per open
// keep-alive connection.
#pragma once

#include <memory>
#include <string>

#include "switchboard/admission/context_source.h"
#include "switchboard/common/status.h"
#include "switchboard/webhook/metrics.h"

namespace switchboard::webhook {

struct ServerOptions {
  std::string bind_address = "127.0.0.1";
  int port = 0;  // 0: any free port (see WebhookServer::port())
  std::string cert_file;
  std::string key_file;
  size_t max_body_bytes = 4u << 20;
  int worker_threads = 16;
};

class WebhookServer {
 public:
  // Loads the certificate, binds and starts serving on a background thread.
  // `context` and `metrics` must outlive the server.
  static Result<std::unique_ptr<WebhookServer>> Start(const ServerOptions& options,
                                                      const admission::ContextSource& context,
                                                      Metrics& metrics);
  // Stops accepting, lets requests in flight finish, joins the thread.
  ~WebhookServer();
  WebhookServer(const WebhookServer&) = delete;
  WebhookServer& operator=(const WebhookServer&) = delete;

  int port() const;
  // Idempotent. Returns once the listener thread has ended.
  void Stop();

  struct Impl;

 private:
  explicit WebhookServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace switchboard::webhook
