// PubSub over NATS (nats.c), behaving like Hatchet's Go NATS backend.
//
// Connect is synchronous and refuses servers whose max_payload is below
// `required_max_payload` (16 MiB). After that: reconnect forever, never
// buffer while disconnected (publish fails fast with Unavailable), deliver
// every message to every subscriber. Credentials are connect options, so
// reconnects to gossiped cluster peers authenticate too.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/common/status.h"
#include "switchboard/pubsub/pubsub.h"

namespace switchboard::pubsub {

inline constexpr int64_t kRequiredMaxPayload = 16 * 1024 * 1024;
inline constexpr size_t kDefaultCompressionThreshold = 5 * 1024;
inline constexpr size_t kDefaultMaxDecompressedBytes = 128 * 1024 * 1024;

// A user JWT instead of a username and password (a NATS server in operator
// mode): the JWT is sent on every connect and reconnect, and `sign` returns
// the 64-byte ed25519 signature of the server's nonce by the JWT's subject
// key (nkey.h KeyPair::Sign). Called on nats.c's threads; must not throw.
// A server that sends no nonce (not in operator mode) refuses the connect:
// Connect fails with FailedPrecondition naming kNoNonceRefusal
// (IsNoNonceRefusal), and `sign` is not called.
struct UserJwtCredentials {
  std::string jwt;
  std::function<Result<std::string>(std::string_view nonce)> sign;
};
inline constexpr std::string_view kNoNonceRefusal =
    "the server sent no nonce to sign: it does not accept user JWTs (not in NATS operator mode)";
// Whether a connect failed because the server takes no user JWTs.
inline bool IsNoNonceRefusal(const Status& s) {
  return s.code() == StatusCode::kFailedPrecondition &&
         s.message().find(kNoNonceRefusal) != std::string_view::npos;
}

struct NatsOptions {
  std::string urls;  // comma-separated seeds, nats:// or tls://, no credentials inside
  std::string username;
  std::string password;  // never logged
  // Instead of username and password; kept alive by the connection.
  std::shared_ptr<const UserJwtCredentials> user_jwt;
  std::string subject_prefix = kDefaultSubjectPrefix;

  // TLS: a CA bundle to trust and an optional client certificate + key (PEM).
  // Any of them (or a tls:// URL) makes TLS required: nats.c never falls
  // back to plaintext.
  std::string ca_file;
  // The CA bundle itself (PEM text) instead of ca_file, for a caller that
  // holds it in memory (the authorizer, from a Secret); never logged.
  std::string ca_pem;
  std::string cert_file;
  std::string key_file;

  std::string name = "switchboard";  // connection name shown by the server

  // Connect and reconnect to the one URL in `urls` only: servers the
  // cluster gossips are ignored, so the connection stays on (or comes back
  // to) that server. ValidateNatsOptions requires exactly one URL then.
  bool pinned = false;
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds reconnect_wait{2000};
  // false: a lost connection is closed for good at once (on_error gets
  // Unavailable), for an owner that connects again itself, perhaps with
  // other credentials.
  bool reconnect = true;
  int64_t required_max_payload = kRequiredMaxPayload;

  // gzip on publish. Off by default, as in Hatchet's NATS backend, which
  // never compresses on publish (only its RabbitMQ backend does) and only
  // decompresses on receive. When on: gzip once the payloads total
  // `compression_threshold` bytes, and only if every payload shrinks.
  // Subscribers always decompress messages marked `compressed`.
  bool compression = false;
  size_t compression_threshold = kDefaultCompressionThreshold;   // total payload bytes
  size_t max_decompressed_bytes = kDefaultMaxDecompressedBytes;  // per message

  // Asynchronous errors, called on a library thread and also logged:
  // PermissionDenied for permission violations, ResourceExhausted for a
  // slow consumer dropping messages, Unavailable when nats.c closed the
  // connection for good (e.g. credentials refused on reconnect).
  std::function<void(const Status&)> on_error;
  // After each reconnect (not the first connect), on a library thread: a
  // server the connection is on now may be a new process that lost what an
  // earlier one held. nats.c runs one connection's callbacks one at a time
  // and none after its closed callback, which destroying the connection
  // waits for. Must return at once and must not use the connection: hand
  // the work to a thread of the owner's.
  std::function<void()> on_reconnected;
};

class NatsPubSub : public PubSub {
 public:
  // Connects synchronously. Errors: InvalidArgument (bad options, naming the
  // field), Unavailable (no server reachable), Unauthenticated (credentials
  // refused), FailedPrecondition (max_payload too small).
  static Result<std::unique_ptr<NatsPubSub>> Connect(const NatsOptions& options);

  // The server's max_payload and the URL currently connected to.
  virtual int64_t MaxPayload() const = 0;
  virtual std::string ConnectedUrl() const = 0;
  // Round trip to the server (PING/PONG) within `timeout`.
  virtual Status Flush(std::chrono::milliseconds timeout) = 0;
  // The server's verdict on what this client sent before the call: a round
  // trip (Flush), then PermissionDenied with the server's message when the
  // server refused a publish or subscription since the previous Confirm (or
  // Connect). NATS reports a refusal only asynchronously, so Publish
  // returning OK means "handed to the connection", not "accepted"; call
  // Confirm before telling anyone a message went out. Errors of the round
  // trip itself: Timeout, Unavailable. nats.c keeps only a connection's
  // last error, so exactly the same refusal (same subject) twice without
  // another error between them is returned the first time only;
  // NatsOptions::on_error hears every refusal.
  virtual Status Confirm(std::chrono::milliseconds timeout) = 0;
};

// NatsOptions::urls as a list: "a, b,c" -> {"a", "b", "c"} (blank entries
// dropped).
std::vector<std::string> SplitUrls(const std::string& urls);

// Checks NatsOptions without connecting; the error names the field.
Status ValidateNatsOptions(const NatsOptions& options);

// Tears nats.c down and returns once every thread it started has finished:
// its timer, callback and garbage-collector threads, each connection's
// reader, flusher and reconnect threads, and each subscription's delivery
// thread (nats.c detaches those, but each reports its very end to the
// library). Waits first until the last NatsPubSub is destroyed (its
// Subscriptions hold it, and so does a running Probe). Call it at the end
// of main, from a thread of your own: from a handler or callback it fails
// with FailedPrecondition. A later Connect opens the library again. A
// process that never calls it leaves those threads running into exit.
Status ShutdownNats();

}  // namespace switchboard::pubsub
