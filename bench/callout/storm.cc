#include "storm.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <utility>

namespace switchboard::bench {

namespace {

using Clock = std::chrono::steady_clock;

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

bool SendAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;  // a few hundred bytes into an empty socket buffer
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

Storm::Storm(std::vector<StormTarget> targets, StormOptions options)
    : targets_(std::move(targets)),
      options_(options),
      conns_(targets_.size()),
      epoll_(epoll_create1(EPOLL_CLOEXEC)) {}

Clock::time_point Storm::RetryAt(size_t i) const {
  // Spread over the jitter by the connection's index: the same every run.
  const auto jitter = options_.retry_jitter.count() > 0
                          ? std::chrono::milliseconds((i * 7919) % options_.retry_jitter.count())
                          : std::chrono::milliseconds(0);
  return Clock::now() + options_.retry_pause + jitter;
}

Storm::~Storm() {
  for (auto& c : conns_) {
    if (c.fd >= 0) close(c.fd);
  }
  if (epoll_ >= 0) close(epoll_);
}

void Storm::StartConnect(size_t i, StormResult& r) {
  Conn& c = conns_[i];
  c.in.clear();
  c.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c.fd < 0) return Drop(i, RetryAt(i));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const auto& ports = targets_[i].ports;
  addr.sin_port =
      htons(static_cast<uint16_t>(ports.empty() ? 0 : ports[c.port_index % ports.size()]));
  r.attempts++;
  int rc = connect(c.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  if (rc != 0 && errno != EINPROGRESS) return Drop(i, RetryAt(i));
  c.state = rc == 0 ? State::kAwaitInfo : State::kConnecting;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP;
  ev.data.u64 = i;
  epoll_ctl(epoll_, EPOLL_CTL_ADD, c.fd, &ev);
}

void Storm::Drop(size_t i, Clock::time_point retry_at) {
  Conn& c = conns_[i];
  c.port_index++;
  if (c.fd >= 0) {
    epoll_ctl(epoll_, EPOLL_CTL_DEL, c.fd, nullptr);
    close(c.fd);
  }
  c.fd = -1;
  c.state = State::kIdle;
  c.retry_at = retry_at;
}

bool Storm::OnEvent(size_t i, uint32_t events, StormResult& r) {
  Conn& c = conns_[i];
  if (c.state == State::kConnecting) {
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      Drop(i, RetryAt(i));
      return false;
    }
    c.state = State::kAwaitInfo;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.u64 = i;
    epoll_ctl(epoll_, EPOLL_CTL_MOD, c.fd, &ev);
  }
  if (!(events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))) return true;
  char buf[4096];
  while (true) {
    ssize_t n = recv(c.fd, buf, sizeof buf, 0);
    if (n > 0) {
      c.in.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    Drop(i, RetryAt(i));  // EOF or error: the server went away
    return false;
  }
  size_t eol;
  while ((eol = c.in.find("\r\n")) != std::string::npos) {
    std::string line = c.in.substr(0, eol);
    c.in.erase(0, eol + 2);
    if (line.rfind("PING", 0) == 0) {
      if (!SendAll(c.fd, "PONG\r\n")) {
        Drop(i, RetryAt(i));
        return false;
      }
    } else if (line.rfind("INFO ", 0) == 0 && c.state == State::kAwaitInfo) {
      const std::string connect =
          "CONNECT {\"verbose\":false,\"pedantic\":false,\"lang\":\"bench\",\"version\":\"0\","
          "\"protocol\":1,\"user\":" +
          JsonString(targets_[i].user) + ",\"pass\":" + JsonString(targets_[i].password) +
          "}\r\nPING\r\n";
      if (!SendAll(c.fd, connect)) {
        Drop(i, RetryAt(i));
        return false;
      }
      c.state = State::kAwaitPong;
    } else if (line.rfind("PONG", 0) == 0 && c.state == State::kAwaitPong) {
      c.state = State::kUp;
    } else if (line.rfind("-ERR", 0) == 0) {
      if (r.auth_refusals++ == 0) r.first_refusal = line;
      r.refusals_by_text[line]++;
      Drop(i, RetryAt(i));
      return false;
    }
  }
  return true;
}

void Storm::Round(std::chrono::milliseconds wait, StormResult& r, bool reconnect) {
  epoll_event events[256];
  int n = epoll_wait(epoll_, events, 256, static_cast<int>(wait.count()));
  for (int k = 0; k < n; k++) OnEvent(static_cast<size_t>(events[k].data.u64), events[k].events, r);
  if (!reconnect) return;
  const auto now = Clock::now();
  for (size_t i = 0; i < conns_.size(); i++) {
    if (conns_[i].state == State::kIdle && conns_[i].retry_at <= now) StartConnect(i, r);
  }
}

std::map<int, int> Storm::UpByPort() const {
  std::map<int, int> out;
  for (size_t i = 0; i < conns_.size(); i++) {
    const auto& ports = targets_[i].ports;
    if (conns_[i].state == State::kUp && !ports.empty())
      out[ports[conns_[i].port_index % ports.size()]]++;
  }
  return out;
}

int Storm::CountUp() const {
  int up = 0;
  for (const auto& c : conns_) up += c.state == State::kUp;
  return up;
}

StormResult Storm::RunUntilAllUp(std::chrono::milliseconds deadline) {
  StormResult r;
  const auto start = Clock::now();
  while ((r.up = CountUp()) < size() && Clock::now() - start < deadline) {
    Round(std::chrono::milliseconds(2), r, true);
  }
  r.all_up = r.up == size();
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

int Storm::RunUntilDown(int count, std::chrono::milliseconds deadline) {
  StormResult ignored;
  const auto start = Clock::now();
  while (size() - CountUp() < count && Clock::now() - start < deadline) {
    Round(std::chrono::milliseconds(5), ignored, false);
  }
  return size() - CountUp();
}

double ProcessCpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close_paren = stat.rfind(')');  // the command name may hold spaces
  if (close_paren == std::string::npos) return -1;
  std::istringstream fields(stat.substr(close_paren + 2));
  std::string f;
  double ticks = 0;
  for (int i = 3; fields >> f && i <= 15; i++) {
    if (i == 14 || i == 15) ticks += std::atof(f.c_str());  // utime, stime
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

long ProcessStatusKb(pid_t pid, const char* field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  const size_t n = std::strlen(field);
  while (std::getline(in, line)) {
    if (line.compare(0, n, field) == 0 && line.size() > n && line[n] == ':') {
      return std::atol(line.c_str() + n + 1);
    }
  }
  return -1;
}

}  // namespace switchboard::bench
