// A deliberately low-level TLS client for the hostile-client tests: it can
// send a request byte by byte, stop in the middle, stream a chunked body
// and notice the server's answer while still sending, which a normal HTTP
// client cannot. Blocking sockets with receive/send timeouts, so no call
// waits forever. Not thread-safe; one connection per object.
#pragma once

#include <chrono>
#include <memory>
#include <string>

typedef struct ssl_st SSL;          // NOLINT: OpenSSL's own spelling
typedef struct ssl_ctx_st SSL_CTX;  // NOLINT

namespace switchboard::testing {

struct RawResponse {
  int status = 0;  // 0: no complete response
  std::string body;
};

class RawTlsClient {
 public:
  // Connects to 127.0.0.1:port over TCP only; Handshake() starts TLS.
  // Without verification: these tests are about the server's limits.
  explicit RawTlsClient(int port, std::chrono::milliseconds io_timeout = std::chrono::seconds(10));
  ~RawTlsClient();
  RawTlsClient(const RawTlsClient&) = delete;
  RawTlsClient& operator=(const RawTlsClient&) = delete;

  bool connected() const { return fd_ >= 0; }
  bool Handshake();
  // Writes all of `bytes` over TLS. False when the connection failed.
  bool Send(const std::string& bytes);
  // True when the server has sent something or closed (a read would not
  // block), without reading.
  bool Readable(std::chrono::milliseconds wait = std::chrono::milliseconds(0));
  // True once the server closed the connection (a read returns end of
  // stream or an error), waiting at most `wait`.
  bool ClosedByPeer(std::chrono::milliseconds wait);
  // Reads one HTTP response (status line, headers, Content-Length body).
  RawResponse ReadResponse();

 private:
  int fd_ = -1;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  std::string pending_;  // bytes read past the last response
};

}  // namespace switchboard::testing
