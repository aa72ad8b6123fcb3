#include "http_reader.h"

#include <algorithm>
#include <boost/beast/http/error.hpp>
#include <utility>

namespace switchboard::webhook_server {

namespace http = boost::beast::http;

RequestReader::RequestReader(HttpLimits limits) : limits_(limits) { Reset(); }

void RequestReader::Reset() {
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(limits_.max_header_bytes));
  parser_->body_limit(limits_.max_body_bytes);
  // Parse body bytes as they arrive, so they move into the body (bounded by
  // body_limit) instead of piling up in the read buffer.
  parser_->eager(true);
}

boost::asio::mutable_buffer RequestReader::Prepare(size_t n) { return buffer_.prepare(n); }

void RequestReader::Commit(size_t n) { buffer_.commit(n); }

void RequestReader::Append(std::string_view bytes) {
  auto space = buffer_.prepare(bytes.size());
  std::copy(bytes.begin(), bytes.end(), static_cast<char*>(space.data()));
  buffer_.commit(bytes.size());
}

RequestReader::State RequestReader::Refuse(int status, std::string reason, std::string detail) {
  refused_ = true;
  refusal_ = {status, std::move(reason), std::move(detail)};
  return State::kRefused;
}

RequestReader::State RequestReader::Parse() {
  if (refused_) return State::kRefused;
  while (!parser_->is_done()) {
    if (buffer_.size() == 0) return State::kNeedMore;
    boost::beast::error_code ec;
    size_t used = parser_->put(buffer_.data(), ec);
    buffer_.consume(used);
    if (ec == http::error::need_more) {
      // The parser waits for a whole header block (or chunk header) before
      // consuming it. Its header_limit catches long header blocks; this
      // catches anything else that would make unconsumed bytes pile up.
      if (buffer_.size() > limits_.max_header_bytes + (64u << 10)) {
        return Refuse(431, "header_too_large",
                      "more than " + std::to_string(limits_.max_header_bytes) +
                          " bytes of header or chunk framing");
      }
      return State::kNeedMore;
    }
    if (ec == http::error::body_limit) {
      return Refuse(413, "body_too_large", "body larger than the limit");
    }
    if (ec == http::error::header_limit) {
      return Refuse(431, "header_too_large",
                    "header larger than " + std::to_string(limits_.max_header_bytes) + " bytes");
    }
    if (ec) return Refuse(400, "bad_request", ec.message());
    if (used == 0) return State::kNeedMore;
  }
  return State::kComplete;
}

HttpRequest RequestReader::TakeRequest() {
  auto message = parser_->release();
  HttpRequest out;
  out.method = std::string(message.method_string());
  out.target = std::string(message.target());
  out.version = message.version();
  out.keep_alive = message.keep_alive();
  out.body = std::move(message.body());
  Reset();
  return out;
}

}  // namespace switchboard::webhook_server
