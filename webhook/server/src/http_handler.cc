#include "http_handler.h"

#include <chrono>
#include <nlohmann/json.hpp>
#include <string_view>

#include "switchboard/common/log.h"
#include "switchboard/webhook_admission/admission.h"

namespace switchboard::webhook_server {
namespace {

std::string ErrorJson(int code, const std::string& message) {
  nlohmann::json body = {{"code", code}, {"message", message}};
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Paths are logged and echoed in messages: keep them short.
std::string Clip(std::string_view s) {
  constexpr size_t kMax = 200;
  return std::string(s.substr(0, kMax)) + (s.size() > kMax ? "..." : "");
}

}  // namespace

RequestHandler::RequestHandler(size_t max_body_bytes,
                               const webhook_admission::ContextSource& context, Metrics& metrics)
    : max_body_bytes_(max_body_bytes), context_(&context), metrics_(&metrics) {}

HttpResponse RequestHandler::Handle(const HttpRequest& request, const std::string& remote) const {
  std::string_view target = request.target;
  std::string_view path = target.substr(0, target.find('?'));
  const std::string& method = request.method;
  auto wrong_method = [&](std::string_view allowed) {
    return Reject(405, "method_not_allowed",
                  "method " + Clip(method) + " not allowed on " + std::string(path) + "; use " +
                      std::string(allowed),
                  std::string(path), remote);
  };
  if (path == "/validate" || path == "/mutate") {
    if (method != "POST") return wrong_method("POST");
    return Review(path == "/validate" ? webhook_admission::Webhook::kValidating
                                      : webhook_admission::Webhook::kMutating,
                  request, remote);
  }
  if (path == "/healthz" || path == "/readyz" || path == "/metrics") {
    if (method != "GET") return wrong_method("GET");
    if (path == "/healthz") return {200, "text/plain", "ok\n"};
    if (path == "/metrics") return {200, "text/plain; version=0.0.4", metrics_->Serialize()};
    if (context_->Synced()) return {200, "text/plain", "ok\n"};
    return {503, "text/plain", "object cache has not synced yet\n"};
  }
  return Reject(404, "not_found",
                "no such path " + Clip(path) +
                    "; use POST /validate or /mutate, GET /healthz, /readyz or /metrics",
                Clip(path), remote);
}

HttpResponse RequestHandler::Refused(const HttpRefusal& refusal, const std::string& remote) const {
  std::string message;
  switch (refusal.status) {
    case 413:
      message = "request body exceeds " + std::to_string(max_body_bytes_) +
                " bytes; raise --max-body-bytes if objects this large are expected";
      break;
    case 431:
      message = "request header too large (" + refusal.detail + ")";
      break;
    case 408:
      message = "request not received in time (" + refusal.detail + ")";
      break;
    default:
      message = "bad HTTP request: " + refusal.detail;
  }
  return Reject(refusal.status, refusal.reason, message, "", remote);
}

HttpResponse RequestHandler::Reject(int status, const std::string& reason,
                                    const std::string& message, const std::string& path,
                                    const std::string& remote) const {
  metrics_->ObserveRejected(reason);
  log::Warn("webhook", "request rejected",
            {{"status", status}, {"path", path}, {"reason", reason}, {"remote", remote}});
  return {status, "application/json", ErrorJson(status, message)};
}

HttpResponse RequestHandler::Review(webhook_admission::Webhook webhook, const HttpRequest& request,
                                    const std::string& remote) const {
  auto start = std::chrono::steady_clock::now();
  webhook_admission::Outcome out = webhook_admission::Review(request.body, webhook, *context_);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  metrics_->ObserveReview(webhook, out, seconds);
  HttpResponse response{out.http_status, "application/json", std::move(out.body)};

  if (out.result == "allowed" && log::GetLevel() > log::Level::kDebug) return response;
  nlohmann::json fields = {
      {"webhook", webhook == webhook_admission::Webhook::kValidating ? "validate" : "mutate"},
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
    fields["remote"] = remote;
    log::Warn("webhook", "admission review failed", fields);
  }
  return response;
}

}  // namespace switchboard::webhook_server
