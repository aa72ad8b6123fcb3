// A fake NATS server for the faults a real nats-server cannot be made to
// produce on demand: it accepts connections, answers PING with PONG (so
// connect and flush succeed) and silently swallows every published message
// (the probe's "round trip did not arrive" path). Given a `refusal` line
// (e.g. "-ERR 'maximum connections exceeded'"), it answers the connect's
// PING with that instead and closes the connection, as nats-server does
// when it refuses a client after its CONNECT.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace switchboard::pubsub::testutil {

class SilentNats {
 public:
  explicit SilentNats(std::string refusal = "") : refusal_(std::move(refusal)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd_, 8) != 0) {
      return;
    }
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }
  ~SilentNats() {
    stopping_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    ::close(listen_fd_);
    if (accept_thread_.joinable()) accept_thread_.join();
    for (int fd : client_fds_) ::shutdown(fd, SHUT_RDWR);
    for (auto& t : client_threads_) t.join();
    for (int fd : client_fds_) ::close(fd);
  }
  std::string url() const { return "nats://127.0.0.1:" + std::to_string(port_); }
  bool ok() const { return port_ > 0; }

 private:
  void AcceptLoop() {
    while (!stopping_) {
      int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      client_fds_.push_back(fd);
      client_threads_.emplace_back([this, fd] { Serve(fd); });
    }
  }

  void Serve(int fd) {
    std::string info =
        "INFO "
        "{\"server_id\":\"silent\",\"version\":\"2.9.10\",\"proto\":1,\"host\":\"127.0.0.1\","
        "\"port\":" +
        std::to_string(port_) + ",\"max_payload\":16777216,\"headers\":true}\r\n";
    if (::write(fd, info.data(), info.size()) < 0) return;
    std::string buf;
    char chunk[4096];
    while (true) {
      ssize_t n = ::read(fd, chunk, sizeof chunk);
      if (n <= 0) return;
      buf.append(chunk, static_cast<size_t>(n));
      while (true) {
        size_t eol = buf.find("\r\n");
        if (eol == std::string::npos) break;
        std::string line = buf.substr(0, eol);
        if (line.starts_with("PUB ") || line.starts_with("HPUB ")) {
          // The last token is the payload size; wait until it is all here.
          size_t size = std::strtoul(line.substr(line.rfind(' ') + 1).c_str(), nullptr, 10);
          if (buf.size() < eol + 2 + size + 2) break;
          buf.erase(0, eol + 2 + size + 2);  // swallowed: never delivered
          continue;
        }
        buf.erase(0, eol + 2);
        if (line.starts_with("PING")) {
          if (!refusal_.empty()) {
            const std::string err = refusal_ + "\r\n";
            if (::write(fd, err.data(), err.size()) < 0) return;
            ::shutdown(fd, SHUT_WR);
            return;
          }
          if (::write(fd, "PONG\r\n", 6) < 0) return;
        }
      }
    }
  }

  const std::string refusal_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread accept_thread_;
  std::vector<int> client_fds_;  // written only by the accept thread until it is joined
  std::vector<std::thread> client_threads_;
};

}  // namespace switchboard::pubsub::testutil
