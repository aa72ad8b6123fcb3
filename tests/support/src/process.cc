#include "switchboard/testing/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace switchboard::testing {
namespace {

std::vector<std::string> BuildEnv(const std::map<std::string, std::string>& extra,
                                  const std::vector<std::string>& unset) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& k : unset) env.erase(k);
  for (const auto& [k, v] : extra) env[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

int DecodeExit(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// Spawns argv; optional fds for stdin/stdout/stderr (-1: /dev/null for stdin,
// inherit for the others).
pid_t Spawn(std::vector<std::string> argv, std::vector<std::string> env, int in_fd, int out_fd,
            int err_fd) {
  auto args = Pointers(argv);
  auto envp = Pointers(env);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid != 0) return pid;
  // Child: its own process group so a test's kill never reaches the runner.
  setpgid(0, 0);
  // A test or bench killed outright (ctest's timeout, SIGKILL) runs no
  // destructor: the kernel then stops what it started. (The signal follows
  // the forking thread; every caller forks from a thread that outlives it.)
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);  // the parent died before prctl
  int devnull = open("/dev/null", O_RDONLY);
  dup2(in_fd >= 0 ? in_fd : devnull, 0);
  if (out_fd >= 0) dup2(out_fd, 1);
  if (err_fd >= 0) dup2(err_fd, 2);
  for (int fd = 3; fd < 1024; ++fd) close(fd);
  execvpe(args[0], args.data(), envp.data());
  std::fprintf(stderr, "exec %s: %s\n", args[0], std::strerror(errno));
  _exit(127);
}

}  // namespace

Process::Process(Options options) : log_path_(options.log_path) {
  int out = -1;
  if (!log_path_.empty())
    out = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int in_pipe[2] = {-1, -1};
  if (!options.stdin_data.empty() && pipe2(in_pipe, O_CLOEXEC) != 0) in_pipe[0] = in_pipe[1] = -1;
  pid_ = Spawn(options.argv, BuildEnv(options.env, options.unset_env), in_pipe[0], out, out);
  if (out >= 0) close(out);
  if (in_pipe[0] >= 0) {
    close(in_pipe[0]);
    const std::string& d = options.stdin_data;
    size_t off = 0;
    while (off < d.size()) {
      ssize_t n = write(in_pipe[1], d.data() + off, d.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    close(in_pipe[1]);
  }
}

Process::~Process() { Stop(); }

Process::Process(Process&& other) noexcept { *this = std::move(other); }

Process& Process::operator=(Process&& other) noexcept {
  if (this != &other) {
    Stop();
    pid_ = other.pid_;
    exit_status_ = other.exit_status_;
    log_path_ = std::move(other.log_path_);
    other.pid_ = -1;
  }
  return *this;
}

void Process::Reap(int status) {
  exit_status_ = status;
  pid_ = -1;
}

bool Process::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    Reap(status);
    return false;
  }
  return r == 0;
}

bool Process::Signal(int sig) {
  if (!running()) return false;
  return kill(pid_, sig) == 0;
}

std::optional<int> Process::Wait(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!exit_status_) return std::nullopt;
  return DecodeExit(*exit_status_);
}

std::optional<int> Process::Stop(std::chrono::milliseconds grace) {
  if (!running())
    return exit_status_ ? std::optional<int>(DecodeExit(*exit_status_)) : std::nullopt;
  pid_t pid = pid_;
  kill(pid, SIGTERM);
  if (auto code = Wait(grace)) return code;
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  Reap(status);
  return DecodeExit(status);
}

std::string Process::Log() const {
  if (log_path_.empty()) return "";
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

RunResult Run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
              const std::string& stdin_data, std::chrono::milliseconds timeout) {
  RunResult result;
  int out_pipe[2], err_pipe[2], in_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0 ||
      pipe2(in_pipe, O_CLOEXEC) != 0) {
    result.err = "pipe failed";
    return result;
  }
  pid_t pid = Spawn(argv, BuildEnv(env, {}), in_pipe[0], out_pipe[1], err_pipe[1]);
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);

  // Feed stdin from a thread so a child that writes before reading cannot
  // deadlock against us.
  std::thread feeder([fd = in_pipe[1], &stdin_data] {
    signal(SIGPIPE, SIG_IGN);
    size_t off = 0;
    while (off < stdin_data.size()) {
      ssize_t n = write(fd, stdin_data.data() + off, stdin_data.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    close(fd);
  });

  auto deadline = std::chrono::steady_clock::now() + timeout;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  bool killed = false;
  char buf[65536];
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0 && !killed) {
      kill(pid, SIGKILL);
      killed = true;
    }
    int r = poll(fds, 2, left > 0 ? static_cast<int>(left) : 100);
    if (r < 0 && errno == EINTR) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? result.out : result.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  feeder.join();
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = DecodeExit(status);
  return result;
}

}  // namespace switchboard::testing
