// A reconnect storm driver: many NATS client connections (user and
// password, as an engine connects) held by one thread on epoll, so a
// thousand of them cost a thousand sockets and no threads. A connection
// that drops or is refused tries again after a pause: by default a fixed
// 10 ms, so the measured time is the server's (and its authorizer's), not
// a client's backoff; StormOptions gives the Go client's pacing instead
// (2 s and a jitter), for thousands of connections at once, where a 10 ms
// retry is a flood no client sends. A target with several ports (a
// cluster's URL list) tries the next one after a drop or a refusal, as the
// Go client moves a server it lost to the end of its pool.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace switchboard::bench {

struct StormTarget {
  std::vector<int> ports;  // 127.0.0.1; the first is where it connects first
  std::string user, password;
};

struct StormResult {
  bool all_up = false;
  int up = 0;
  int auth_refusals = 0;                        // -ERR after CONNECT (Authorization Violation...)
  int attempts = 0;                             // TCP connects started
  std::string first_refusal;                    // the server's -ERR line, once
  std::map<std::string, int> refusals_by_text;  // -ERR line -> how many
  double seconds = 0;                           // from the call until all were up (or the deadline)
};

struct StormOptions {
  std::chrono::milliseconds retry_pause{10};
  // Each connection adds its own share of this (by index, not random).
  std::chrono::milliseconds retry_jitter{0};
};
// nats.go's defaults: ReconnectWait 2 s, ReconnectJitter 100 ms.
inline StormOptions GoClientPacing() {
  return {std::chrono::milliseconds(2000), std::chrono::milliseconds(100)};
}

class Storm {
 public:
  explicit Storm(std::vector<StormTarget> targets, StormOptions options = {});
  ~Storm();
  Storm(const Storm&) = delete;
  Storm& operator=(const Storm&) = delete;

  // Connects every target not yet up (again after a drop) until all have
  // had their PONG after CONNECT, or the deadline.
  StormResult RunUntilAllUp(std::chrono::milliseconds deadline);
  // Serves the open connections (PING -> PONG), reconnecting none, until at
  // least `count` are down (their server went away) or the deadline;
  // returns how many are down.
  int RunUntilDown(int count, std::chrono::milliseconds deadline);
  int size() const { return static_cast<int>(conns_.size()); }
  // How many connections are up on each port.
  std::map<int, int> UpByPort() const;

 private:
  enum class State { kIdle, kConnecting, kAwaitInfo, kAwaitPong, kUp };
  struct Conn {
    int fd = -1;
    State state = State::kIdle;
    std::string in;
    std::chrono::steady_clock::time_point retry_at{};
    size_t port_index = 0;  // into the target's ports
  };
  std::chrono::steady_clock::time_point RetryAt(size_t i) const;
  void StartConnect(size_t i, StormResult& r);
  void Drop(size_t i, std::chrono::steady_clock::time_point retry_at);
  // Handles readiness on connection i; false when it dropped.
  bool OnEvent(size_t i, uint32_t events, StormResult& r);
  // One epoll round (at most `wait`), then the retries that are due.
  void Round(std::chrono::milliseconds wait, StormResult& r, bool reconnect);
  int CountUp() const;

  std::vector<StormTarget> targets_;
  StormOptions options_;
  std::vector<Conn> conns_;
  int epoll_ = -1;
};

// CPU seconds (user + system) process `pid` has used so far; -1 when gone.
double ProcessCpuSeconds(pid_t pid);
// VmRSS / VmHWM of process `pid` in KiB; -1 when gone.
long ProcessStatusKb(pid_t pid, const char* field);

}  // namespace switchboard::bench
