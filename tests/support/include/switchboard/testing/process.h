// A child process owned by a test: started with an argv and extra env,
// stdout/stderr captured to a file, killed (SIGTERM, then SIGKILL) and reaped
// on destruction. Tests start only what they stop.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace switchboard::testing {

class Process {
 public:
  struct Options {
    std::vector<std::string> argv;           // argv[0] is looked up in PATH
    std::map<std::string, std::string> env;  // added to (or overriding) the parent's
    std::vector<std::string> unset_env;      // removed from the child's environment
    std::string log_path;                    // stdout+stderr; empty: inherit
    std::string stdin_data;                  // written then closed; empty: /dev/null
  };

  Process() = default;
  explicit Process(Options options);  // starts; check running()
  ~Process();
  Process(Process&& other) noexcept;
  Process& operator=(Process&& other) noexcept;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  bool running();

  // Sends a signal (SIGHUP for a reload, SIGSTOP ...). False if not running.
  bool Signal(int sig);

  // SIGTERM, wait up to `grace`, then SIGKILL. Returns the exit status
  // (as from waitpid) or nullopt if it was not running.
  std::optional<int> Stop(std::chrono::milliseconds grace = std::chrono::seconds(5));

  // Waits for the process to exit by itself; returns its exit code (or 128+sig).
  std::optional<int> Wait(std::chrono::milliseconds timeout);

  // Contents of the captured log so far (empty when not captured).
  std::string Log() const;

 private:
  void Reap(int status);

  pid_t pid_ = -1;
  std::optional<int> exit_status_;
  std::string log_path_;
};

// Runs a command to completion, capturing stdout and stderr separately.
struct RunResult {
  int exit_code = -1;  // 128+signal when killed
  std::string out;
  std::string err;
};
RunResult Run(const std::vector<std::string>& argv,
              const std::map<std::string, std::string>& env = {},
              const std::string& stdin_data = "",
              std::chrono::milliseconds timeout = std::chrono::seconds(60));

}  // namespace switchboard::testing
