#include "switchboard/pubsub/nats_pubsub.h"

#include <atomic>

#include "nats_connection.h"
#include "nats_library.h"
#include "nats_options.h"
#include "nats_status.h"
#include "nats_subscription.h"
#include "switchboard/common/log.h"
#include "switchboard/pubsub/chunking.h"
#include "switchboard/pubsub/codec.h"
#include "switchboard/pubsub/compression.h"

namespace switchboard::pubsub {
namespace {

constexpr const char* kLogger = "pubsub.nats";

using internal::Connection;
using internal::ConnState;
using internal::FromNats;

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
    if (options_.compression) {
      // Sent compressed only when every payload shrinks; otherwise as it is.
      if (auto c = TryCompressMessage(message, options_.compression_threshold)) {
        return PublishEncoded(*subject, *c);
      }
    }
    return PublishEncoded(*subject, message);
  }

  Result<std::unique_ptr<Subscription>> Subscribe(const Topic& topic, Handler handler) override {
    auto subject = Subject(options_.subject_prefix, topic);
    if (!subject.ok()) return subject.status();
    return internal::SubscribeNats(conn_, *subject, std::move(handler),
                                   options_.max_decompressed_bytes, options_.connect_timeout);
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

  Status Confirm(std::chrono::milliseconds timeout) override {
    SB_RETURN_IF_ERROR(Flush(timeout));
    return conn_->TakeRefusal();
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

Result<std::unique_ptr<NatsPubSub>> NatsPubSub::Connect(const NatsOptions& options) {
  SB_RETURN_IF_ERROR(ValidateNatsOptions(options));
  auto conn = internal::OpenConnection(options);
  if (!conn.ok()) return conn.status();
  auto impl = std::make_unique<NatsPubSubImpl>(std::move(conn).value(), options);
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
