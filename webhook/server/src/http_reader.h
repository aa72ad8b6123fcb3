// HTTP/1.1 request framing for the webhook, without sockets: bytes in,
// complete requests (or a refusal with its HTTP status) out. The server
// feeds it what a connection reads; the fuzz target feeds it arbitrary bytes.
//
// Bounds, whatever the framing (Content-Length or chunked):
//   - the header block (request line + fields, and chunk headers/trailers)
//     is at most `max_header_bytes`, else 431;
//   - the body is at most `max_body_bytes`, else 413 as soon as the
//     declared length or the chunks received so far exceed it (the body is
//     never buffered beyond the limit);
//   - malformed framing (bad request line, bad chunk size, both
//     Content-Length and chunked, ...) is 400.
// Bytes after a complete request (pipelining) are kept for the next one.
// Not thread-safe: one reader per connection.
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace switchboard::webhook_server {

struct HttpLimits {
  size_t max_body_bytes = 4u << 20;
  size_t max_header_bytes = 16u << 10;
};

struct HttpRequest {
  std::string method;  // as sent, e.g. "POST"
  std::string target;  // path and query, e.g. "/validate?timeout=5s"
  int version = 11;    // 10 for HTTP/1.0, 11 for HTTP/1.1
  bool keep_alive = true;
  std::string body;
};

// Why a request was refused before it was complete.
struct HttpRefusal {
  int status = 400;    // 400, 413 or 431
  std::string reason;  // metrics label: bad_request, body_too_large, header_too_large
  std::string detail;  // what the parser saw, for the response and the log
};

class RequestReader {
 public:
  enum class State { kNeedMore, kComplete, kRefused };

  explicit RequestReader(HttpLimits limits);

  // Space for up to `n` more bytes from the connection; call Commit() with
  // the number actually written there.
  boost::asio::mutable_buffer Prepare(size_t n);
  void Commit(size_t n);
  // Prepare + copy + Commit.
  void Append(std::string_view bytes);

  // Parses what has been committed. kComplete: take the request with
  // TakeRequest(); kRefused: see refusal(); the connection must be closed
  // after answering (the rest of the stream cannot be framed).
  State Parse();
  // The complete request; resets the parser for the next one.
  HttpRequest TakeRequest();
  const HttpRefusal& refusal() const { return refusal_; }

  // True once any byte of the current request has arrived (so the
  // connection is no longer idle).
  bool started() const { return buffer_.size() > 0 || parser_->got_some(); }

 private:
  void Reset();
  State Refuse(int status, std::string reason, std::string detail);

  HttpLimits limits_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  HttpRefusal refusal_;
  bool refused_ = false;
};

}  // namespace switchboard::webhook_server
