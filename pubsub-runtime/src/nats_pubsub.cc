#include "switchboard/pubsub/nats_pubsub.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "nats_handles.h"
#include "nats_library.h"
#include "nats_status.h"
#include "switchboard/common/log.h"
#include "switchboard/pubsub/chunking.h"
#include "switchboard/pubsub/codec.h"
#include "switchboard/pubsub/compression.h"

namespace switchboard::pubsub {
namespace {

constexpr const char* kLogger = "pubsub.nats";

using internal::FromNats;

std::vector<std::string> SplitUrls(const std::string& urls) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= urls.size()) {
    size_t comma = urls.find(',', start);
    if (comma == std::string::npos) comma = urls.size();
    std::string u = urls.substr(start, comma - start);
    size_t b = u.find_first_not_of(" \t"), e = u.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(u.substr(b, e - b + 1));
    start = comma + 1;
  }
  return out;
}

// A latch: set once, waited on with a deadline.
class Latch {
 public:
  void Set() {
    std::lock_guard lock(mu_);
    set_ = true;
    cv_.notify_all();
  }
  bool Wait(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return set_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool set_ = false;  // guarded by mu_
};

// State the connection's callbacks reach through their closure. It lives
// until the closed callback has run (the last one nats.c makes).
struct ConnState {
  std::string prefix;
  std::function<void(const Status&)> on_error;
  std::atomic<bool> closing{false};  // set before an intentional close
  Latch closed;
};

void OnAsyncError(natsConnection* nc, natsSubscription* sub, natsStatus err,
                  void* closure) noexcept {
  try {
    auto* state = static_cast<ConnState*>(closure);
    const char* text = nullptr;
    if (nc != nullptr) natsConnection_GetLastError(nc, &text);
    std::string detail = text != nullptr && *text != '\0' ? text : natsStatus_GetText(err);
    Status status;
    if (err == NATS_NOT_PERMITTED) {
      status = Status::PermissionDenied(
          "NATS permission violation: " + detail +
          "; the NATS user must be allowed to publish and subscribe on " + state->prefix + ".*");
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

void OnClosed(natsConnection*, void* closure) noexcept {
  static_cast<ConnState*>(closure)->closed.Set();
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

// A subscription's delivery state. Kept alive by the subscription object and
// by the closure nats.c holds until its on-complete callback.
struct SubState {
  std::string subject;
  Handler handler;
  size_t max_decompressed;
  Latch complete;
  std::atomic<std::thread::id> delivery_thread{};  // set by the delivery thread
  Message scratch;                                 // used only on the delivery thread

  void Deliver(const char* data, int len) {
    delivery_thread = std::this_thread::get_id();
    // One message object per subscription, reused: calls never overlap.
    Message& m = scratch;
    if (Status s = DecodeMessageInto(std::string_view(data, static_cast<size_t>(len)), &m);
        !s.ok()) {
      log::Warn(kLogger, "dropping undecodable message",
                {{"subject", subject}, {"error", s.message()}});
      return;
    }
    if (Status s = DecompressMessage(&m, max_decompressed); !s.ok()) {
      log::Warn(kLogger, "dropping message that does not decompress",
                {{"subject", subject}, {"id", m.id}, {"error", s.message()}});
      return;
    }
    Status s = handler(m);
    if (!s.ok()) {
      // Hatchet semantics: handler errors are logged, never redelivered.
      log::Error(kLogger, "message handler failed",
                 {{"subject", subject}, {"id", m.id}, {"error", s.ToString()}});
    }
  }
};

using SubHolder = std::shared_ptr<SubState>;

void OnMessage(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) noexcept {
  internal::NatsMsgPtr owned(msg);  // the handler owns the message
  auto& state = **static_cast<SubHolder*>(closure);
  try {
    state.Deliver(natsMsg_GetData(msg), natsMsg_GetDataLength(msg));
  } catch (const std::exception& e) {
    try {
      log::Error(kLogger, "message handler threw",
                 {{"subject", state.subject}, {"error", e.what()}});
    } catch (...) {
    }
  } catch (...) {
    try {
      log::Error(kLogger, "message handler threw a non-exception", {{"subject", state.subject}});
    } catch (...) {
    }
  }
}

void OnSubscriptionComplete(void* closure) noexcept {
  auto* holder = static_cast<SubHolder*>(closure);
  (*holder)->complete.Set();
  delete holder;
}

// Owns the connection; shared by the PubSub and its subscriptions so a
// subscription may outlive the PubSub object safely.
class Connection {
 public:
  Connection(natsConnection* nc, std::shared_ptr<ConnState> state)
      : nc_(nc), state_(std::move(state)) {}
  ~Connection() {
    state_->closing = true;
    natsConnection_Close(nc_.get());
    // Callbacks run on nats.c's threads; the state they use stays alive
    // until the closed callback has run.
    if (!state_->closed.Wait(std::chrono::seconds(5))) {
      new std::shared_ptr<ConnState>(state_);  // leak rather than risk a use after free
    }
  }
  natsConnection* get() const { return nc_.get(); }
  const ConnState& state() const { return *state_; }

 private:
  internal::NatsConnectionPtr nc_;
  std::shared_ptr<ConnState> state_;
};

class NatsSubscription : public Subscription {
 public:
  NatsSubscription(std::shared_ptr<Connection> conn, natsSubscription* sub, SubHolder state)
      : conn_(std::move(conn)), sub_(sub), state_(std::move(state)) {}
  ~NatsSubscription() override {
    natsSubscription_Unsubscribe(sub_.get());
    // Wait until no handler call is running, unless we are inside one.
    if (std::this_thread::get_id() != state_->delivery_thread) {
      state_->complete.Wait(std::chrono::seconds(10));
    }
  }

 private:
  std::shared_ptr<Connection> conn_;
  internal::NatsSubscriptionPtr sub_;
  SubHolder state_;
};

class NatsPubSubImpl : public NatsPubSub {
 public:
  NatsPubSubImpl(std::shared_ptr<Connection> conn, NatsOptions options)
      : conn_(std::move(conn)), options_(std::move(options)) {}

  Status Publish(const Topic& topic, const Message& message) override {
    // The prefix was validated at connect; the subject of the last topic
    // this thread published to is reused (publishers loop on one topic).
    // Keyed by a process-unique instance id, not `this`: a new instance may
    // reuse a destroyed one's address with another prefix.
    thread_local uint64_t cached_owner = 0;
    thread_local std::string cached_name, cached_subject;
    if (cached_owner != instance_id_ || cached_name != topic.name) {
      auto built = Subject(options_.subject_prefix, topic);
      if (!built.ok()) return built.status();
      cached_owner = instance_id_;
      cached_name = topic.name;
      cached_subject = std::move(built).value();
    }
    const std::string* subject = &cached_subject;
    // No status pre-check: with a zero reconnect buffer nats.c itself fails
    // a publish at once while disconnected (PublishBody maps that).
    if (options_.compression && !message.compressed &&
        message.PayloadBytes() >= options_.compression_threshold) {
      return PublishEncoded(*subject, CompressMessage(message, options_.compression_threshold));
    }
    return PublishEncoded(*subject, message);
  }

  Result<std::unique_ptr<Subscription>> Subscribe(const Topic& topic, Handler handler) override {
    auto subject = Subject(options_.subject_prefix, topic);
    if (!subject.ok()) return subject.status();
    if (!handler) return Status::InvalidArgument("subscribe: handler must not be empty");
    auto state = std::make_shared<SubState>();
    state->subject = *subject;
    state->handler = std::move(handler);
    state->max_decompressed = options_.max_decompressed_bytes;
    auto* holder = new SubHolder(state);
    natsSubscription* raw = nullptr;
    natsStatus s =
        natsConnection_Subscribe(&raw, conn_->get(), subject->c_str(), OnMessage, holder);
    if (s != NATS_OK) {
      delete holder;
      return FromNats(s, "subscribe to " + *subject);
    }
    internal::NatsSubscriptionPtr sub(raw);
    // Room for several max-size messages, like the Go client's defaults.
    natsSubscription_SetPendingLimits(raw, 512 * 1024, 256 * 1024 * 1024);
    s = natsSubscription_SetOnCompleteCB(raw, OnSubscriptionComplete, holder);
    if (s != NATS_OK) {
      Status err = FromNats(s, "subscribe to " + *subject);
      natsSubscription_Unsubscribe(raw);
      new SubHolder(state);  // `holder` may still be used by an in-flight callback: leak it
      return err;
    }
    auto result = std::make_unique<NatsSubscription>(conn_, sub.release(), state);
    // Interest must exist on the server before Subscribe returns.
    s = natsConnection_FlushTimeout(conn_->get(), options_.connect_timeout.count());
    if (s != NATS_OK) return FromNats(s, "subscribe to " + *subject + ": flush");
    return std::unique_ptr<Subscription>(std::move(result));
  }

  bool IsReady() const override {
    return natsConnection_Status(conn_->get()) == NATS_CONN_STATUS_CONNECTED;
  }
  std::string_view Kind() const override { return "nats"; }

  int64_t MaxPayload() const override { return natsConnection_GetMaxPayload(conn_->get()); }

  std::string ConnectedUrl() const override {
    char url[512] = {0};
    if (natsConnection_GetConnectedUrl(conn_->get(), url, sizeof url) != NATS_OK) return "";
    return url;
  }

  Status Flush(std::chrono::milliseconds timeout) override {
    natsStatus s = natsConnection_FlushTimeout(conn_->get(), timeout.count());
    return s == NATS_OK ? Status::Ok() : FromNats(s, "flush");
  }

 private:
  Status PublishEncoded(const std::string& subject, const Message& message) {
    int64_t max_payload = natsConnection_GetMaxPayload(conn_->get());
    if (max_payload <= 0) max_payload = options_.required_max_payload;
    // Fast path: one body. Small ones are encoded into a per-thread buffer
    // (no allocation per publish); big ones into a local string, so a
    // single 16 MiB message does not stay allocated for the thread's life.
    size_t size = EncodedSize(message);
    if (static_cast<int64_t>(size) <= max_payload) {
      constexpr size_t kReusedBufferLimit = 64 * 1024;
      if (size > kReusedBufferLimit) return PublishBody(subject, EncodeMessage(message));
      thread_local std::string body;
      body.clear();
      EncodeMessageTo(message, &body);
      return PublishBody(subject, body);
    }
    auto chunks = EncodeChunks(message, max_payload);
    if (!chunks.ok()) return chunks.status().Annotate("publish to " + subject);
    for (const auto& body : *chunks) SB_RETURN_IF_ERROR(PublishBody(subject, body));
    return Status::Ok();
  }

  Status PublishBody(const std::string& subject, const std::string& body) {
    natsStatus s = natsConnection_Publish(conn_->get(), subject.c_str(), body.data(),
                                          static_cast<int>(body.size()));
    if (s == NATS_OK) return Status::Ok();
    if (s == NATS_INSUFFICIENT_BUFFER || s == NATS_CONNECTION_CLOSED ||
        s == NATS_CONNECTION_DISCONNECTED) {
      return Status::Unavailable("publish to " + subject +
                                 ": not connected to NATS (nothing is buffered; retry later)");
    }
    return FromNats(s, "publish to " + subject);
  }

  static inline std::atomic<uint64_t> next_instance_id_{1};
  const uint64_t instance_id_ = next_instance_id_.fetch_add(1);
  std::shared_ptr<Connection> conn_;
  NatsOptions options_;
};

}  // namespace

Status ValidateNatsOptions(const NatsOptions& o) {
  auto urls = SplitUrls(o.urls);
  if (urls.empty()) {
    return Status::InvalidArgument(
        "urls: at least one NATS URL is required, e.g. nats://nats:4222");
  }
  for (const auto& u : urls) {
    auto scheme_end = u.find("://");
    std::string scheme = scheme_end == std::string::npos ? "" : u.substr(0, scheme_end);
    if (scheme != "nats" && scheme != "tls") {
      return Status::InvalidArgument(
          "urls: \"" + (u.find('@') == std::string::npos ? u : std::string("<redacted>")) +
          "\" must start with nats:// or tls://");
    }
    std::string rest = u.substr(scheme_end + 3);
    if (rest.find('@') != std::string::npos) {
      return Status::InvalidArgument(
          "urls: credentials must not be embedded in the URL; pass username and password instead");
    }
    if (rest.empty() || rest.front() == ':' || rest.front() == '/') {
      return Status::InvalidArgument("urls: \"" + u + "\" has no host");
    }
  }
  SB_RETURN_IF_ERROR(ValidateSubjectPrefix(o.subject_prefix));
  if (o.password.empty() == false && o.username.empty()) {
    return Status::InvalidArgument("username: required when a password is given");
  }
  if (o.cert_file.empty() != o.key_file.empty()) {
    return Status::InvalidArgument("cert_file/key_file: a client certificate needs both files");
  }
  if (o.connect_timeout.count() <= 0)
    return Status::InvalidArgument("connect_timeout: must be positive");
  if (o.required_max_payload < 0)
    return Status::InvalidArgument("required_max_payload: must not be negative");
  if (o.max_decompressed_bytes == 0) {
    return Status::InvalidArgument("max_decompressed_bytes: must be positive");
  }
  return Status::Ok();
}

Result<std::unique_ptr<NatsPubSub>> NatsPubSub::Connect(const NatsOptions& options) {
  SB_RETURN_IF_ERROR(ValidateNatsOptions(options));
  internal::EnsureNatsLibrary();

  natsOptions* raw_opts = nullptr;
  if (natsOptions_Create(&raw_opts) != NATS_OK)
    return Status::Internal("natsOptions_Create failed");
  internal::NatsOptionsPtr opts(raw_opts);

  auto urls = SplitUrls(options.urls);
  std::vector<const char*> servers;
  bool tls = !options.ca_file.empty() || !options.cert_file.empty();
  for (const auto& u : urls) {
    servers.push_back(u.c_str());
    if (u.starts_with("tls://")) tls = true;
  }
  auto state = std::make_shared<ConnState>();
  state->prefix = options.subject_prefix;
  state->on_error = options.on_error;

  auto check = [](natsStatus s, const char* what) {
    return s == NATS_OK ? Status::Ok() : FromNats(s, what);
  };
  SB_RETURN_IF_ERROR(
      check(natsOptions_SetServers(opts.get(), servers.data(), static_cast<int>(servers.size())),
            "urls"));
  if (!options.username.empty()) {
    SB_RETURN_IF_ERROR(check(
        natsOptions_SetUserInfo(opts.get(), options.username.c_str(), options.password.c_str()),
        "username"));
  }
  SB_RETURN_IF_ERROR(check(natsOptions_SetName(opts.get(), options.name.c_str()), "name"));
  SB_RETURN_IF_ERROR(check(natsOptions_SetTimeout(opts.get(), options.connect_timeout.count()),
                           "connect_timeout"));
  // Reconnect forever; never buffer while disconnected (publish fails fast).
  SB_RETURN_IF_ERROR(check(natsOptions_SetAllowReconnect(opts.get(), true), "reconnect"));
  SB_RETURN_IF_ERROR(check(natsOptions_SetMaxReconnect(opts.get(), -1), "reconnect"));
  SB_RETURN_IF_ERROR(check(natsOptions_SetReconnectWait(opts.get(), options.reconnect_wait.count()),
                           "reconnect_wait"));
  SB_RETURN_IF_ERROR(check(natsOptions_SetReconnectBufSize(opts.get(), 0), "reconnect buffer"));
  if (tls) {
    SB_RETURN_IF_ERROR(check(natsOptions_SetSecure(opts.get(), true), "tls"));
    if (!options.ca_file.empty() &&
        natsOptions_LoadCATrustedCertificates(opts.get(), options.ca_file.c_str()) != NATS_OK) {
      return Status::InvalidArgument("ca_file: cannot load CA certificates from " +
                                     options.ca_file);
    }
    if (!options.cert_file.empty()) {
      if (natsOptions_LoadCertificatesChain(opts.get(), options.cert_file.c_str(),
                                            options.key_file.c_str()) != NATS_OK) {
        return Status::InvalidArgument("cert_file/key_file: cannot load the client certificate " +
                                       options.cert_file + " with its key");
      }
    }
  }
  ConnState* closure = state.get();
  SB_RETURN_IF_ERROR(
      check(natsOptions_SetErrorHandler(opts.get(), OnAsyncError, closure), "error handler"));
  SB_RETURN_IF_ERROR(
      check(natsOptions_SetClosedCB(opts.get(), OnClosed, closure), "closed callback"));
  SB_RETURN_IF_ERROR(
      check(natsOptions_SetDisconnectedCB(opts.get(), OnDisconnected, closure), "callback"));
  SB_RETURN_IF_ERROR(
      check(natsOptions_SetReconnectedCB(opts.get(), OnReconnected, nullptr), "callback"));

  natsConnection* nc = nullptr;
  natsStatus s = natsConnection_Connect(&nc, opts.get());
  if (s != NATS_OK) {
    if (nc != nullptr) natsConnection_Destroy(nc);
    return FromNats(s, "connect to " + options.urls);
  }
  auto conn = std::make_shared<Connection>(nc, state);
  auto impl = std::make_unique<NatsPubSubImpl>(conn, options);
  int64_t max_payload = impl->MaxPayload();
  if (max_payload < options.required_max_payload) {
    return Status::FailedPrecondition(
        "server " + impl->ConnectedUrl() + " allows messages of " + std::to_string(max_payload) +
        " bytes (max_payload=" + std::to_string(max_payload) + "), below the " +
        std::to_string(options.required_max_payload) +
        " bytes Hatchet needs; set `max_payload: " + std::to_string(options.required_max_payload) +
        "` in the NATS server config (or spec.maxPayload of the NatsServer) and reload the server");
  }
  // Debug: the operator's probe connects on every reconcile.
  log::Debug(kLogger, "connected to NATS",
             {{"url", impl->ConnectedUrl()},
              {"max_payload", max_payload},
              {"prefix", options.subject_prefix}});
  return std::unique_ptr<NatsPubSub>(std::move(impl));
}

}  // namespace switchboard::pubsub
