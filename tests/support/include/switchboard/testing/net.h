// Loopback helpers: free ports and TCP readiness.
#pragma once

#include <chrono>

namespace switchboard::testing {

// A port on 127.0.0.1 that was free a moment ago (bound then released),
// random between 10000 and the start of the kernel's ephemeral range
// (/proc/sys/net/ipv4/ip_local_port_range), like scripts/lib/proc.sh's
// free_port: a port in that range could be taken by any outgoing connection
// before the server binds it. Never the same port twice in one process; -1
// when none was found.
int FreePort();

// True once something accepts TCP connections on 127.0.0.1:port.
bool WaitForPort(int port, std::chrono::milliseconds timeout);

}  // namespace switchboard::testing
