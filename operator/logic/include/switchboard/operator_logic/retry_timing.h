// How soon the operator looks again at a step it could not finish, and how
// long it waits for what others do (a server's reload, the authorizers'
// caches). Every figure of that kind lives here, named by what it stands
// for; the controller reads them through RetryTimingFor and holds none.
#pragma once

#include <chrono>

namespace switchboard::operator_logic {

namespace timing {
using std::chrono::milliseconds;
// The first retry of a probe while the server may not have loaded the user
// yet (or, AuthCallout, the authorizers not seen its credentials); the
// retries grow from here (DecideProbeFailure).
inline constexpr milliseconds kReloadRetry{500};
// The longest those retries grow to while a reload is awaited.
inline constexpr milliseconds kReloadRetryMax{5000};
// The longest a real failure waits for its next try: a refused or failed
// probe, a CA Secret that cannot be read. A shorter --probe-interval wins.
inline constexpr milliseconds kFailureRetryMax{10000};
// The longest a backend waits before it looks again for its user in the
// config Secret while its server has yet to write it (the backend wakes the
// server, and the write's watch event normally wakes the backend sooner).
inline constexpr milliseconds kConfigWriteRecheck{2000};
// AuthCallout: how long the authorizers' caches usually take to see a new
// credentials Secret, and how long a refusal is still taken for an
// authorizer catching up under load (AuthorizerPending) rather than wrong
// credentials; meanwhile retried at most this far apart.
inline constexpr milliseconds kAuthorizerSync{5000};
inline constexpr milliseconds kAuthorizerPatience{60000};
inline constexpr milliseconds kCalloutRetryMax{2000};
// AuthCallout with isolation: Accounts: how often the operator compares
// what every NATS server's account resolver holds with the installations
// and pushes what is missing or stale. Nothing tells the operator that a
// server restarted with an empty store, so this bounds how long an account
// can be missing after one (plus the comparison's own round trips).
inline constexpr milliseconds kAccountResync{5000};
// How long the operator's connection that answers the servers' account
// lookups waits between passes over the servers while it reconnects: a
// restarted server's first clients are answered only once it is back, so
// it should be back before them (nats.c and nats.go wait 2 s between
// passes).
inline constexpr milliseconds kAccountLookupsReconnect{250};
// Operator mode: a NatsServer's reconciles, while its spec stays the same,
// are spaced by what the last one took (it collects every installation's
// account): kServerSpacingFactor times that, so a burst of backend changes
// keeps at most a fifth of a core on them, never below kServerSpacingFloor
// (a new installation's account reaches the servers that soon after its
// backend) and never above the configured interval.
inline constexpr milliseconds kServerSpacingFloor{100};
inline constexpr int kServerSpacingFactor = 4;
}  // namespace timing

// How far apart an operator-mode server's reconciles run (see
// kServerSpacingFactor); `ceiling` is --callout-status-interval.
std::chrono::milliseconds ServerReconcileSpacing(std::chrono::milliseconds last_took,
                                                 std::chrono::milliseconds ceiling);

// What the retry timing depends on, as the operator is configured.
struct RetryTimingFacts {
  std::chrono::milliseconds probe_interval{0};      // --probe-interval
  std::chrono::milliseconds authorizer_recheck{0};  // AuthorizerAvailable's recheck
};

struct RetryTiming {
  std::chrono::milliseconds reload_retry{0};     // ProbeFailureFacts
  std::chrono::milliseconds failure_retry{0};    // ProbeFailureFacts
  std::chrono::milliseconds authorizer_sync{0};  // ThroughAuthorizers
  // A backend whose user its server has yet to write (DecideInFile's wait).
  std::chrono::milliseconds config_write_wait{0};
  // A probe CA that cannot be read (the CA Secret is not watched).
  std::chrono::milliseconds backend_ca_retry{0};
  // An AuthCallout server's CA that cannot be read: never later than its
  // next authorizer check would look anyway.
  std::chrono::milliseconds server_ca_retry{0};
  // The next comparison of the servers' account resolvers with the
  // installations after one that went through, and after one that failed
  // (no server reachable, the system user refused).
  std::chrono::milliseconds account_resync{0};
  std::chrono::milliseconds account_sync_retry{0};
};

RetryTiming RetryTimingFor(const RetryTimingFacts& facts);

}  // namespace switchboard::operator_logic
