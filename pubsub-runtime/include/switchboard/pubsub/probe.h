// A live health check of one installation's pub/sub with its own
// credentials: connect, check max_payload, then publish a Hatchet message on
// `<prefix>.<probe topic>` and wait for it to come back.
//
// Error codes (the operator maps them to status reasons):
//   InvalidArgument     bad options; the message names the field
//   Unavailable         no server reachable (or TLS handshake failed)
//   Unauthenticated     credentials refused (authorization violation)
//   FailedPrecondition  server max_payload below 16 MiB; the message names
//                       both numbers, the fix, and "max_payload=<observed>"
//   PermissionDenied    publish/subscribe on the prefix not permitted
//   ResourceExhausted   refused at a connection limit: the account's
//                       max_connections (the credentials were accepted) or
//                       the server's; the message names which
//   Timeout             the round trip did not arrive within `timeout`
// Passwords never appear in messages or logs. A non-empty ca_file turns TLS
// on (as a tls:// URL does). Each call makes its own connection and closes
// it; safe to call from several threads at once (each probe uses its own
// random nonce, so concurrent probes on one prefix do not confuse each
// other).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "switchboard/common/status.h"

namespace switchboard::pubsub {

struct ProbeOptions {
  std::string urls;  // comma-separated seeds
  std::string username;
  std::string password;
  std::string subject_prefix;  // empty: hatchet.pubsub
  std::string ca_file;         // optional PEM path
  // Bounds each step: connect (per seed), the subscribe flush, and the
  // round trip of the probe message.
  std::chrono::milliseconds timeout{5000};
};

struct ProbeReport {
  int64_t server_max_payload = 0;
  std::string connected_url;
  std::chrono::microseconds round_trip{0};
};

// The probe's topic name (one token, inside any `<prefix>.*` permission).
inline constexpr const char* kProbeTopicName = "switchboard_probe_v1";

Result<ProbeReport> Probe(const ProbeOptions& options);

}  // namespace switchboard::pubsub
