#include "switchboard/common/signals.h"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <thread>

namespace switchboard::signals {
namespace {

sigset_t StopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

}  // namespace

void BlockStopSignals() {
  sigset_t set = StopSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

int WaitForStopSignal() {
  const sigset_t set = StopSignals();
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

Status RunUntilSignal(const std::function<Status()>& run,
                      const std::function<void(int)>& on_signal) {
  const sigset_t set = StopSignals();
  std::atomic<bool> returned{false};  // run has returned: a signal now only ends the thread
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&set, &sig);
    if (!returned) on_signal(sig);
  });
  Status s = run();
  returned = true;
  // Wakes the waiter if no signal came (it is blocked in sigwait).
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  return s;
}

}  // namespace switchboard::signals
