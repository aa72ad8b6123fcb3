// How the services stop on SIGTERM and SIGINT: no work in a signal handler.
// The signals are blocked in every thread and taken by one thread of their
// own (sigwait), which calls the service's Stop; main joins that thread
// before it returns, whatever ended the run.
#pragma once

#include <functional>

#include "switchboard/common/status.h"

namespace switchboard::signals {

// Blocks SIGTERM and SIGINT in the calling thread, and so in every thread
// it starts afterwards, and ignores SIGPIPE (a peer that hangs up is an
// error on the write, not the end of the process). Call first in main,
// before any thread exists.
void BlockStopSignals();

// Waits on this thread for SIGTERM or SIGINT (blocked by
// BlockStopSignals) and returns which came: for a service whose work runs
// on threads of its own.
int WaitForStopSignal();

// Runs `run` on this thread while a thread of its own waits for SIGTERM or
// SIGINT and then calls `on_signal(signal)` once (the service's Stop, which
// makes `run` return). Returns what `run` returned, once that thread is
// joined: run may also return by itself (an error, a lost lease).
Status RunUntilSignal(const std::function<Status()>& run,
                      const std::function<void(int)>& on_signal);

}  // namespace switchboard::signals
