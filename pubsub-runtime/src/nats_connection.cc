#include "nats_connection.h"

#include <cstdlib>
#include <cstring>

#include "nats_options.h"
#include "nats_status.h"
#include "switchboard/common/log.h"

namespace switchboard::pubsub::internal {
namespace {

constexpr const char* kLogger = "pubsub.nats";
// Bounds the round trip before an intentional close.
constexpr std::chrono::milliseconds kQuietTimeout{2000};

ConnState& StateOf(void* closure) { return **static_cast<ConnHolder*>(closure); }

// `sub` may already be freed (nats.c passes it without a reference): only
// compared with null.
void OnAsyncError(natsConnection* nc, natsSubscription* sub, natsStatus err,
                  void* closure) noexcept {
  NatsCallbackScope scope;
  try {
    ConnState* state = &StateOf(closure);
    const char* text = nullptr;
    if (nc != nullptr) natsConnection_GetLastError(nc, &text);
    std::string detail = text != nullptr && *text != '\0' ? text : natsStatus_GetText(err);
    Status status;
    if (err == NATS_NOT_PERMITTED) {
      status = PermissionViolation(detail, state->prefix);
    } else if (err == NATS_SLOW_CONSUMER) {
      status = Status::ResourceExhausted("slow consumer, messages dropped: " + detail);
    } else {
      status = FromNats(err, "nats async error");
    }
    log::Warn(kLogger, "asynchronous NATS error",
              {{"error", status.ToString()}, {"has_subscription", sub != nullptr}});
    // Not once the owner is closing: it may be gone by the time this runs
    // when it was destroyed from inside one of these callbacks.
    if (state->on_error && !state->closing) state->on_error(status);
  } catch (...) {
    // Never let an exception unwind into nats.c.
  }
}

void OnClosed(natsConnection* nc, void* closure) noexcept {
  NatsCallbackScope scope;
  // nats.c calls nothing else for this connection after this callback: the
  // closure goes now, and `keep` holds the state until the latch is set
  // (the waiter may drop its own reference at once).
  auto* holder = static_cast<ConnHolder*>(closure);
  ConnHolder keep = std::move(*holder);
  delete holder;
  ConnState* state = keep.get();
  if (!state->closing) {
    // nats.c gave up for good (e.g. the server refused our credentials on
    // reconnect twice): nothing will work again on this connection.
    try {
      const char* text = nullptr;
      if (nc != nullptr) natsConnection_GetLastError(nc, &text);
      Status s = Status::Unavailable(
          std::string("NATS connection closed for good; reconnect with a new client") +
          (text != nullptr && *text != '\0' ? std::string(" (") + text + ")" : ""));
      log::Error(kLogger, "NATS connection closed", {{"error", s.message()}});
      if (state->on_error) state->on_error(s);
    } catch (...) {
    }
  }
  state->closed.Set();
}

void OnDisconnected(natsConnection*, void* closure) noexcept {
  NatsCallbackScope scope;
  try {
    if (StateOf(closure).closing) return;
    log::Warn(kLogger, "disconnected from NATS; reconnecting (publishes fail until then)");
  } catch (...) {
  }
}

void OnReconnected(natsConnection* nc, void* closure) noexcept {
  NatsCallbackScope scope;
  try {
    char url[256] = {0};
    natsConnection_GetConnectedUrl(nc, url, sizeof url);
    log::Info(kLogger, "reconnected to NATS", {{"url", url}});
    ConnState& state = StateOf(closure);
    if (state.on_reconnected && !state.closing) state.on_reconnected();
  } catch (...) {
  }
}

}  // namespace

Status PermissionViolation(std::string_view server_text, std::string_view prefix) {
  return Status::PermissionDenied("NATS permission violation: " + std::string(server_text) +
                                  "; the NATS user must be allowed to publish and subscribe on " +
                                  std::string(prefix) + ".*");
}

Status Connection::TakeRefusal(std::string_view only_naming) {
  const char* text = nullptr;
  natsStatus last = natsConnection_GetLastError(nc_.get(), &text);
  if (last != NATS_NOT_PERMITTED || text == nullptr) {
    // Another error came since: a refusal seen next is a new one.
    std::lock_guard lock(mu_);
    if (last != NATS_OK) reported_.clear();
    return Status::Ok();
  }
  // A copy at once: nats.c's reader thread may overwrite its buffer.
  const std::string refusal(text);
  if (!only_naming.empty() && refusal.find(only_naming) == std::string::npos) {
    return Status::Ok();
  }
  std::lock_guard lock(mu_);
  if (refusal == reported_) return Status::Ok();
  reported_ = refusal;
  return PermissionViolation(refusal, state_->prefix);
}

namespace {

// nats.c frees what these return (free()).
natsStatus OnUserJwt(char** jwt, char** error, void* closure) {
  const auto* creds = static_cast<const UserJwtCredentials*>(closure);
  *jwt = strdup(creds->jwt.c_str());
  if (*jwt == nullptr) {
    *error = strdup("out of memory");
    return NATS_NO_MEMORY;
  }
  return NATS_OK;
}

natsStatus OnSignNonce(char** error, unsigned char** signature, int* length, const char* nonce,
                       void* closure) {
  const auto* creds = static_cast<const UserJwtCredentials*>(closure);
  // nats.c asks for a signature even when the server's INFO carried no
  // nonce: a server that takes no JWTs (not in operator mode, e.g. one
  // still on a static config of another mode).
  if (nonce == nullptr) {
    *error = strdup(std::string(kNoNonceRefusal).c_str());
    return NATS_ERR;
  }
  Result<std::string> sig = Status::Internal("no signer");
  try {
    if (creds->sign) sig = creds->sign(nonce);
  } catch (...) {
    sig = Status::Internal("the nonce signer threw");
  }
  if (!sig.ok() || sig->empty()) {
    *error = strdup(sig.ok() ? "empty nonce signature" : sig.status().message().c_str());
    return NATS_ERR;
  }
  *signature = static_cast<unsigned char*>(malloc(sig->size()));
  if (*signature == nullptr) return NATS_NO_MEMORY;
  memcpy(*signature, sig->data(), sig->size());
  *length = static_cast<int>(sig->size());
  return NATS_OK;
}

}  // namespace

Status InstallConnectionCallbacks(natsOptions* opts, ConnHolder* holder) {
  natsStatus s = natsOptions_SetErrorHandler(opts, OnAsyncError, holder);
  if (s == NATS_OK) s = natsOptions_SetClosedCB(opts, OnClosed, holder);
  if (s == NATS_OK) s = natsOptions_SetDisconnectedCB(opts, OnDisconnected, holder);
  if (s == NATS_OK) s = natsOptions_SetReconnectedCB(opts, OnReconnected, holder);
  if (s == NATS_OK && (*holder)->user_jwt) {
    void* creds = const_cast<UserJwtCredentials*>((*holder)->user_jwt.get());
    s = natsOptions_SetUserCredentialsCallbacks(opts, OnUserJwt, creds, OnSignNonce, creds);
  }
  return s == NATS_OK ? Status::Ok() : FromNats(s, "install connection callbacks");
}

void Connection::Retire(NatsSubscriptionPtr sub, std::chrono::milliseconds timeout) {
  // Handles retired earlier are covered by the same round trip.
  std::vector<NatsSubscriptionPtr> waiting;
  {
    std::lock_guard lock(mu_);
    waiting.swap(retired_);
  }
  waiting.push_back(std::move(sub));
  // Not while reconnecting: the round trip could only time out; the
  // handles wait for the next Retire or the close.
  if (natsConnection_Status(nc_.get()) == NATS_CONN_STATUS_CONNECTED &&
      natsConnection_FlushTimeout(nc_.get(), timeout.count()) == NATS_OK) {
    return;
  }
  std::lock_guard lock(mu_);
  for (auto& w : waiting) retired_.push_back(std::move(w));
}

Connection::~Connection() {
  state_->closing = true;
  // Every subscription is gone by now (each holds the connection), so after
  // a round trip nothing more should arrive. nats.c 3.4.1 leaks the buffer
  // of a large message its reader is halfway through when the reader
  // exits (natsParser_Destroy frees only the inline buffer), so the close
  // comes once the stream is quiet where a round trip can tell.
  if (natsConnection_Status(nc_.get()) == NATS_CONN_STATUS_CONNECTED) {
    natsConnection_FlushTimeout(nc_.get(), kQuietTimeout.count());
  }
  // Returns once nats.c's reader, flusher and reconnect threads are joined.
  natsConnection_Close(nc_.get());
  // The closed callback is the last one: after it nothing calls into
  // state_. It runs on nats.c's callback thread, so a connection dropped
  // from inside one of its own callbacks cannot wait for it (the closure
  // keeps the state alive instead, and on_error is no longer called).
  if (!OnNatsCallbackThread()) state_->closed.Wait();
  // No reader is left to hold a retired handle.
  {
    std::lock_guard lock(mu_);
    retired_.clear();
  }
  nc_.reset();
}

Result<std::shared_ptr<Connection>> OpenConnection(const NatsOptions& options) {
  auto library = std::make_unique<NatsLibraryUse>();
  SB_RETURN_IF_ERROR(library->status());
  auto opts = BuildNatsOptions(options);
  if (!opts.ok()) return opts.status();
  auto state = std::make_shared<ConnState>();
  state->prefix = options.subject_prefix;
  state->on_error = options.on_error;
  state->on_reconnected = options.on_reconnected;
  state->user_jwt = options.user_jwt;
  // nats.c owns the closure from a successful connect on (its closed
  // callback deletes it); a failed connect makes no callback.
  auto holder = std::make_unique<ConnHolder>(state);
  SB_RETURN_IF_ERROR(InstallConnectionCallbacks(opts->get(), holder.get()));

  natsConnection* nc = nullptr;
  natsStatus s = natsConnection_Connect(&nc, opts->get());
  if (s != NATS_OK) {
    if (nc != nullptr) {
      holder.release();  // a connection was made after all: its closed callback frees it
      natsConnection_Destroy(nc);
    }
    Status failed = FromNats(s, "connect to " + options.urls);
    if (failed.message().find(kNoNonceRefusal) != std::string::npos) {
      return Status::FailedPrecondition("connect to " + options.urls + ": " +
                                        std::string(kNoNonceRefusal));
    }
    return failed;
  }
  holder.release();
  return std::make_shared<Connection>(std::move(library), nc, state);
}

}  // namespace switchboard::pubsub::internal
