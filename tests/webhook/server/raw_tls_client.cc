#include "raw_tls_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace switchboard::testing {

RawTlsClient::RawTlsClient(int port, std::chrono::milliseconds io_timeout) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return;
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(io_timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((io_timeout.count() % 1000) * 1000);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return;
  }
  fd_ = fd;
}

RawTlsClient::~RawTlsClient() {
  if (ssl_ != nullptr) SSL_free(ssl_);
  if (ctx_ != nullptr) SSL_CTX_free(ctx_);
  if (fd_ >= 0) close(fd_);
}

bool RawTlsClient::Handshake() {
  if (fd_ < 0) return false;
  ctx_ = SSL_CTX_new(TLS_client_method());
  if (ctx_ == nullptr) return false;
  ssl_ = SSL_new(ctx_);
  if (ssl_ == nullptr) return false;
  SSL_set_fd(ssl_, fd_);
  return SSL_connect(ssl_) == 1;
}

bool RawTlsClient::Send(const std::string& bytes) {
  if (ssl_ == nullptr) return false;
  size_t done = 0;
  while (done < bytes.size()) {
    int n = SSL_write(ssl_, bytes.data() + done, static_cast<int>(bytes.size() - done));
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool RawTlsClient::Readable(std::chrono::milliseconds wait) {
  if (fd_ < 0) return true;
  if (ssl_ != nullptr && SSL_pending(ssl_) > 0) return true;
  auto deadline = std::chrono::steady_clock::now() + wait;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(std::max<long>(0, left.count()))) <= 0) return false;
    if (ssl_ == nullptr) return true;
    // The socket is readable, but TLS 1.3 session tickets arrive after the
    // handshake without any application data: peek without blocking to
    // tell them apart.
    int flags = fcntl(fd_, F_GETFL);
    fcntl(fd_, F_SETFL, flags | O_NONBLOCK);
    char c;
    int n = SSL_peek(ssl_, &c, 1);
    int err = n > 0 ? SSL_ERROR_NONE : SSL_get_error(ssl_, n);
    fcntl(fd_, F_SETFL, flags);
    if (err != SSL_ERROR_WANT_READ) return true;  // data, end of stream or error
    if (std::chrono::steady_clock::now() >= deadline) return false;
  }
}

bool RawTlsClient::ClosedByPeer(std::chrono::milliseconds wait) {
  auto deadline = std::chrono::steady_clock::now() + wait;
  char buf[4096];
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() < 0) return false;
    if (!Readable(left)) return false;
    int n = ssl_ != nullptr ? SSL_read(ssl_, buf, sizeof(buf))
                            : static_cast<int>(read(fd_, buf, sizeof(buf)));
    if (n <= 0) return true;
    pending_.append(buf, static_cast<size_t>(n));
  }
}

RawResponse RawTlsClient::ReadResponse() {
  RawResponse out;
  if (ssl_ == nullptr) return out;
  char buf[16384];
  size_t header_end = std::string::npos;
  size_t length = 0;
  while (true) {
    if (header_end == std::string::npos) {
      header_end = pending_.find("\r\n\r\n");
      if (header_end != std::string::npos) {
        // "HTTP/1.1 413 Payload Too Large"
        out.status = std::atoi(pending_.substr(9, 3).c_str());
        std::string headers = pending_.substr(0, header_end);
        for (auto& c : headers) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        auto cl = headers.find("content-length:");
        if (cl != std::string::npos) length = std::strtoul(headers.c_str() + cl + 15, nullptr, 10);
        header_end += 4;
      }
    }
    if (header_end != std::string::npos && pending_.size() >= header_end + length) {
      out.body = pending_.substr(header_end, length);
      pending_.erase(0, header_end + length);
      return out;
    }
    int n = SSL_read(ssl_, buf, sizeof(buf));
    if (n <= 0) {
      out.status = 0;
      return out;
    }
    pending_.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace switchboard::testing
