// The only translation unit that includes httplib.h (a very large header
// whose TLS classes depend on CPPHTTPLIB_OPENSSL_SUPPORT from pkg-config).
#include <httplib.h>
#include <openssl/ssl.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "switchboard/admission/admission.h"
#include "switchboard/common/log.h"
#include "switchboard/webhook/cert_reloader.h"
#include "switchboard/webhook/server.h"

namespace switchboard::webhook {

struct WebhookServer::Impl {
  ServerOptions options;
  const admission::ContextSource* context = nullptr;
  Metrics* metrics = nullptr;
  std::unique_ptr<CertReloader> certs;
  std::unique_ptr<httplib::SSLServer> http;
  std::thread thread;
  int port = 0;
  std::atomic<bool> stopped{false};

  void Routes();
  void HandleReview(admission::Webhook webhook, const httplib::Request& req,
                    httplib::Response& res);
};

namespace {

std::string ErrorJson(int code, const std::string& message) {
  nlohmann::json body = {{"code", code}, {"message", message}};
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

void WebhookServer::Impl::HandleReview(admission::Webhook webhook, const httplib::Request& req,
                                       httplib::Response& res) {
  auto start = std::chrono::steady_clock::now();
  admission::Outcome out = admission::Review(req.body, webhook, *context);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  res.status = out.http_status;
  res.set_content(std::move(out.body), "application/json");
  metrics->ObserveReview(webhook, out, seconds);

  if (out.result == "allowed" && log::GetLevel() > log::Level::kDebug) return;
  nlohmann::json fields = {
      {"webhook", webhook == admission::Webhook::kValidating ? "validate" : "mutate"},
      {"uid", out.uid},
      {"kind", out.kind},
      {"operation", out.operation},
      {"namespace", out.namespace_},
      {"name", out.name},
      {"result", out.result},
      {"warnings", out.warnings},
      {"patched", out.patched},
      {"seconds", seconds}};
  if (!out.message.empty()) fields["message"] = out.message;
  if (out.result == "allowed") {
    log::Debug("webhook", "admission review", fields);
  } else if (out.result == "denied") {
    log::Info("webhook", "admission review denied", fields);
  } else {
    fields["remote"] = req.remote_addr;
    log::Warn("webhook", "admission review failed", fields);
  }
}

void WebhookServer::Impl::Routes() {
  http->Post("/validate", [this](const httplib::Request& req, httplib::Response& res) {
    HandleReview(admission::Webhook::kValidating, req, res);
  });
  http->Post("/mutate", [this](const httplib::Request& req, httplib::Response& res) {
    HandleReview(admission::Webhook::kMutating, req, res);
  });
  http->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  http->Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
    if (context->Synced()) {
      res.set_content("ok\n", "text/plain");
    } else {
      res.status = 503;
      res.set_content("object cache has not synced yet\n", "text/plain");
    }
  });
  http->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics->Serialize(), "text/plain; version=0.0.4");
  });

  // Runs for every status >= 400; our own review answers already carry a
  // body and are left alone.
  http->set_error_handler(httplib::Server::HandlerWithResponse(
      [this](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        std::string message;
        std::string reason;
        if (res.status == 413) {
          reason = "body_too_large";
          message = "request body exceeds " + std::to_string(options.max_body_bytes) +
                    " bytes; raise --max-body-bytes if objects this large are expected";
        } else if (res.status == 404) {
          reason = "not_found";
          message = "no such path " + req.path +
                    "; use POST /validate or /mutate, GET /healthz, /readyz or /metrics";
        } else if (res.status == 405) {
          reason = "method_not_allowed";
          message = "method " + req.method + " not allowed on " + req.path;
        } else {
          reason = "bad_request";
          message = "bad HTTP request (status " + std::to_string(res.status) + ")";
        }
        metrics->ObserveRejected(reason);
        log::Warn("webhook", "request rejected",
                  {{"status", res.status},
                   {"path", req.path},
                   {"reason", reason},
                   {"remote", req.remote_addr}});
        res.set_content(ErrorJson(res.status, message), "application/json");
        return httplib::Server::HandlerResponse::Handled;
      }));
  http->set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        res.status = 500;
        res.set_content(ErrorJson(500, "internal error"), "application/json");
      });
}

WebhookServer::WebhookServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

WebhookServer::~WebhookServer() { Stop(); }

int WebhookServer::port() const { return impl_->port; }

void WebhookServer::Stop() {
  if (impl_->stopped.exchange(true)) return;
  impl_->http->stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

Result<std::unique_ptr<WebhookServer>> WebhookServer::Start(const ServerOptions& options,
                                                            const admission::ContextSource& context,
                                                            Metrics& metrics) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->context = &context;
  impl->metrics = &metrics;

  auto certs = CertReloader::Create(options.cert_file, options.key_file);
  if (!certs.ok()) return certs.status();
  impl->certs = std::move(certs).value();
  impl->certs->SetObserver([m = &metrics](bool ok) { m->ObserveCertReload(ok); });

  Status tls_setup;
  CertReloader* reloader = impl->certs.get();
  impl->http = std::make_unique<httplib::SSLServer>([&](SSL_CTX& ctx) {
    // TLS 1.2 is the floor (the API server speaks 1.2 and 1.3); no
    // renegotiation, no compression.
    SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(
        &ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
    tls_setup = reloader->Install(&ctx);
    return tls_setup.ok();
  });
  if (!impl->http->is_valid()) {
    return tls_setup.ok() ? Status::Internal("cannot create the TLS context") : tls_setup;
  }

  httplib::SSLServer& http = *impl->http;
  int threads = options.worker_threads;
  http.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  http.set_payload_max_length(options.max_body_bytes);
  // The API server keeps connections open; serve many requests on each.
  http.set_keep_alive_max_count(100000);
  http.set_keep_alive_timeout(5);
  http.set_read_timeout(10);
  http.set_write_timeout(10);
  http.set_tcp_nodelay(true);
  impl->Routes();

  if (options.port == 0) {
    impl->port = http.bind_to_any_port(options.bind_address);
    if (impl->port <= 0) {
      return Status::Unavailable("cannot listen on " + options.bind_address + " (any port)");
    }
  } else {
    if (!http.bind_to_port(options.bind_address, options.port)) {
      return Status::Unavailable("cannot listen on " + options.bind_address + ":" +
                                 std::to_string(options.port) +
                                 ": address in use or not local; pick another --port");
    }
    impl->port = options.port;
  }
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] {
    if (!raw->http->listen_after_bind() && !raw->stopped.load()) {
      log::Error("webhook", "HTTPS listener ended unexpectedly");
    }
  });
  log::Info("webhook", "serving HTTPS",
            {{"address", options.bind_address},
             {"port", impl->port},
             {"max_body_bytes", options.max_body_bytes},
             {"certificate_sha256", impl->certs->Fingerprint()}});
  return std::unique_ptr<WebhookServer>(new WebhookServer(std::move(impl)));
}

}  // namespace switchboard::webhook
