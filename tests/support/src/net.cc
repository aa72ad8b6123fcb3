#include "switchboard/testing/net.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <thread>

namespace switchboard::testing {

namespace {

// The first port of the kernel's ephemeral range (32768 when unreadable).
int EphemeralLow() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0;
  if (!(in >> low) || low <= 11000) low = 32768;
  return low;
}

// True when nothing holds 127.0.0.1:port (a listener, or a socket in
// TIME_WAIT: no SO_REUSEADDR here).
bool CanBind(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

}  // namespace

int FreePort() {
  // Ports handed out by this process: a test asking twice before binding
  // the first must not get the same one.
  static std::mutex mu;
  static std::set<int> given;
  static std::mt19937 rng(std::random_device{}());
  const int low = EphemeralLow();
  std::lock_guard lock(mu);
  std::uniform_int_distribution<int> pick(10000, low - 1);
  for (int i = 0; i < 200; ++i) {
    int port = pick(rng);
    if (given.count(port) == 0 && CanBind(port)) {
      given.insert(port);
      return port;
    }
  }
  return -1;
}

bool WaitForPort(int port, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    close(fd);
    if (ok) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace switchboard::testing
