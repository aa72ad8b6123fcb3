#include "nats_connection.h"

#include "nats_status.h"
#include "switchboard/common/log.h"

namespace switchboard::pubsub::internal {
namespace {

constexpr const char* kLogger = "pubsub.nats";

void OnAsyncError(natsConnection* nc, natsSubscription* sub, natsStatus err,
                  void* closure) noexcept {
  try {
    auto* state = static_cast<ConnState*>(closure);
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
    if (state->on_error) state->on_error(status);
  } catch (...) {
    // Never let an exception unwind into nats.c.
  }
}

void OnClosed(natsConnection* nc, void* closure) noexcept {
  auto* state = static_cast<ConnState*>(closure);
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
  try {
    if (static_cast<ConnState*>(closure)->closing) return;
    log::Warn(kLogger, "disconnected from NATS; reconnecting (publishes fail until then)");
  } catch (...) {
  }
}

void OnReconnected(natsConnection* nc, void*) noexcept {
  try {
    char url[256] = {0};
    natsConnection_GetConnectedUrl(nc, url, sizeof url);
    log::Info(kLogger, "reconnected to NATS", {{"url", url}});
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

Status InstallConnectionCallbacks(natsOptions* opts, ConnState* state) {
  natsStatus s = natsOptions_SetErrorHandler(opts, OnAsyncError, state);
  if (s == NATS_OK) s = natsOptions_SetClosedCB(opts, OnClosed, state);
  if (s == NATS_OK) s = natsOptions_SetDisconnectedCB(opts, OnDisconnected, state);
  if (s == NATS_OK) s = natsOptions_SetReconnectedCB(opts, OnReconnected, nullptr);
  return s == NATS_OK ? Status::Ok() : FromNats(s, "install connection callbacks");
}

Connection::~Connection() {
  state_->closing = true;
  natsConnection_Close(nc_.get());
  // Callbacks run on nats.c's threads; the state they use stays alive
  // until the closed callback has run.
  if (!state_->closed.Wait(std::chrono::seconds(5))) {
    new std::shared_ptr<ConnState>(state_);  // leak rather than risk a use after free
  }
}

}  // namespace switchboard::pubsub::internal
