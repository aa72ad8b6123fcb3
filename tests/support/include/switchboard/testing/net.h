// Loopback helpers: free ports and TCP readiness.
#pragma once

#include <chrono>

namespace switchboard::testing {

// A port on 127.0.0.1 that was free a moment ago (bound then released).
int FreePort();

// True once something accepts TCP connections on 127.0.0.1:port.
bool WaitForPort(int port, std::chrono::milliseconds timeout);

}  // namespace switchboard::testing
