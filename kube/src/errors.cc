// Mapping API server answers to typed Status values.
#include <string>

#include "switchboard/kube/request.h"

namespace switchboard::kube {

namespace {

StatusCode CodeFromReason(std::string_view reason) {
  if (reason == "NotFound") return StatusCode::kNotFound;
  if (reason == "AlreadyExists") return StatusCode::kAlreadyExists;
  if (reason == "Conflict") return StatusCode::kConflict;
  if (reason == "Invalid" || reason == "BadRequest" || reason == "MethodNotAllowed" ||
      reason == "NotAcceptable" || reason == "UnsupportedMediaType" ||
      reason == "RequestEntityTooLarge") {
    return reason == "RequestEntityTooLarge" ? StatusCode::kResourceExhausted
                                             : StatusCode::kInvalidArgument;
  }
  if (reason == "Forbidden") return StatusCode::kPermissionDenied;
  if (reason == "Unauthorized") return StatusCode::kUnauthenticated;
  if (reason == "Gone" || reason == "Expired") return StatusCode::kGone;
  if (reason == "Timeout" || reason == "ServerTimeout") return StatusCode::kTimeout;
  if (reason == "TooManyRequests") return StatusCode::kResourceExhausted;
  if (reason == "ServiceUnavailable") return StatusCode::kUnavailable;
  if (reason == "InternalError") return StatusCode::kInternal;
  return StatusCode::kOk;  // unknown: decide by HTTP code
}

StatusCode CodeFromHttp(int http) {
  switch (http) {
    case 400:
      return StatusCode::kInvalidArgument;
    case 401:
      return StatusCode::kUnauthenticated;
    case 403:
      return StatusCode::kPermissionDenied;
    case 404:
      return StatusCode::kNotFound;
    case 405:
      return StatusCode::kInvalidArgument;
    case 406:
      return StatusCode::kInvalidArgument;
    case 408:
      return StatusCode::kTimeout;
    case 409:
      return StatusCode::kConflict;
    case 410:
      return StatusCode::kGone;
    case 413:
      return StatusCode::kResourceExhausted;
    case 415:
      return StatusCode::kInvalidArgument;
    case 422:
      return StatusCode::kInvalidArgument;
    case 429:
      return StatusCode::kResourceExhausted;
    case 502:
      return StatusCode::kUnavailable;
    case 503:
      return StatusCode::kUnavailable;
    case 504:
      return StatusCode::kTimeout;
    default:
      break;
  }
  if (http >= 500) return StatusCode::kInternal;
  return StatusCode::kInternal;
}

}  // namespace

Status StatusFromStatusObject(const json& s, int fallback_http_status) {
  std::string reason;
  std::string message;
  int code = fallback_http_status;
  if (s.is_object()) {
    if (auto it = s.find("reason"); it != s.end() && it->is_string()) reason = *it;
    if (auto it = s.find("message"); it != s.end() && it->is_string()) message = *it;
    if (auto it = s.find("code"); it != s.end() && it->is_number_integer()) code = *it;
    if (auto it = s.find("status"); it != s.end() && *it == "Success") return Status::Ok();
  }
  StatusCode sc = CodeFromReason(reason);
  if (sc == StatusCode::kOk) {
    if (code >= 200 && code < 300) return Status::Ok();
    sc = CodeFromHttp(code);
  }
  if (message.empty()) {
    message = reason.empty() ? "HTTP " + std::to_string(code) : reason;
  }
  return Status(sc, std::move(message));
}

Status StatusFromResponse(int http_status, std::string_view body) {
  if (http_status >= 200 && http_status < 300) return Status::Ok();
  json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_object() && parsed.value("kind", "") == "Status") {
    return StatusFromStatusObject(parsed, http_status);
  }
  // Not a Status (a proxy, or a plain-text error): keep a short excerpt.
  std::string text(body.substr(0, 512));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  std::string m = "HTTP " + std::to_string(http_status);
  if (!text.empty()) m += ": " + text;
  return Status(CodeFromHttp(http_status), std::move(m));
}

std::vector<std::string> ParseWarningHeader(std::string_view v) {
  // warning-value = warn-code SP warn-agent SP warn-text [ SP warn-date ]
  // Several values may be comma-separated; commas inside quotes are text.
  std::vector<std::string> out;
  size_t i = 0;
  auto skip_ws = [&] {
    while (i < v.size() && (v[i] == ' ' || v[i] == '\t' || v[i] == ',')) ++i;
  };
  while (true) {
    skip_ws();
    if (i >= v.size()) break;
    size_t start = i;
    // code and agent: two space-separated tokens
    int tokens = 0;
    while (i < v.size() && tokens < 2) {
      while (i < v.size() && v[i] != ' ') ++i;
      ++tokens;
      while (i < v.size() && v[i] == ' ') ++i;
    }
    if (i >= v.size() || v[i] != '"') {
      // Not RFC 7234: return the rest verbatim.
      out.emplace_back(v.substr(start));
      break;
    }
    ++i;  // opening quote
    std::string text;
    bool closed = false;
    while (i < v.size()) {
      char c = v[i++];
      if (c == '\\' && i < v.size()) {
        text.push_back(v[i++]);
      } else if (c == '"') {
        closed = true;
        break;
      } else {
        text.push_back(c);
      }
    }
    out.push_back(std::move(text));
    if (!closed) break;
    // optional warn-date in quotes, then a comma
    while (i < v.size() && v[i] != ',') {
      if (v[i] == '"') {
        ++i;
        while (i < v.size() && v[i] != '"') ++i;
      }
      if (i < v.size()) ++i;
    }
  }
  return out;
}

}  // namespace switchboard::kube
