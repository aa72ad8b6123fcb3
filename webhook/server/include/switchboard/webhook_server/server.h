// The HTTPS admission server (Boost.Beast on Asio over OpenSSL, TLS 1.2 or
// newer): asynchronous, so a connection costs a socket and a few kilobytes,
// not a thread, and slow or idle clients cannot starve the others.
//
//   POST /validate   validating webhook: allowed/denied, warnings
//   POST /mutate     mutating webhook: schema defaults as a JSON Patch
//   GET  /healthz    200 while the process serves
//   GET  /readyz     200 once the object cache has synced, else 503
//   GET  /metrics    Prometheus text format
//
// Every request is bounded (see webhook/README.md, "Limits and deadlines"):
//   - TLS handshake, and each request from its first byte to its last
//     (headers and body), within request_timeout; the response is written
//     within request_timeout too; a keep-alive connection may idle for
//     idle_timeout between requests;
//   - bodies above max_body_bytes get 413 however they are framed
//     (Content-Length or chunked), without being buffered past the limit;
//   - at most max_connections open connections: at the cap the connection
//     idle the longest (keep-alive or not yet sent a byte) is closed to make
//     room, and when none is idle the new connection is closed at once.
// The certificate is reloaded when its files change (CertReloader).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "switchboard/common/status.h"
#include "switchboard/webhook_admission/context_source.h"
#include "switchboard/webhook_server/metrics.h"

namespace switchboard::webhook_server {

struct ServerOptions {
  std::string bind_address = "127.0.0.1";
  int port = 0;  // 0: any free port (see WebhookServer::port())
  std::string cert_file;
  std::string key_file;
  size_t max_body_bytes = 4u << 20;
  // Event loops, one thread each; 0: one per CPU, at most 16.
  int worker_threads = 0;
  int max_connections = 1024;
  std::chrono::milliseconds request_timeout{10000};
  std::chrono::milliseconds idle_timeout{60000};
};

class WebhookServer {
 public:
  // Loads the certificate, binds and starts serving on a background thread.
  // `context` and `metrics` must outlive the server.
  static Result<std::unique_ptr<WebhookServer>> Start(
      const ServerOptions& options, const webhook_admission::ContextSource& context,
      Metrics& metrics);
  // Stops accepting, lets requests in flight finish, joins the thread.
  ~WebhookServer();
  WebhookServer(const WebhookServer&) = delete;
  WebhookServer& operator=(const WebhookServer&) = delete;

  int port() const;
  // Open connections right now (for tests and metrics).
  int connections() const;
  // Stops accepting, closes idle connections, lets requests in flight
  // finish (each bounded by request_timeout), joins the threads.
  // Idempotent.
  void Stop();

  struct Impl;

 private:
  explicit WebhookServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace switchboard::webhook_server
