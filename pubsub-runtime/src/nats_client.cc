#include "switchboard/pubsub/nats_client.h"

#include <condition_variable>
#include <cstdlib>
#include <mutex>

#include "nats_connection.h"
#include "nats_handles.h"
#include "nats_status.h"
#include "nats_subscription.h"

namespace switchboard::pubsub {
namespace {

using internal::Connection;
using internal::FromNats;

Status PublishStatus(natsStatus s, std::string_view subject) {
  if (s == NATS_OK) return Status::Ok();
  if (s == NATS_INSUFFICIENT_BUFFER || s == NATS_CONNECTION_CLOSED ||
      s == NATS_CONNECTION_DISCONNECTED) {
    return Status::Unavailable("publish to " + std::string(subject) +
                               ": not connected to NATS (nothing is buffered; retry later)");
  }
  return FromNats(s, "publish to " + std::string(subject));
}

class NatsClientImpl : public NatsClient {
 public:
  NatsClientImpl(std::shared_ptr<Connection> conn, std::chrono::milliseconds flush_timeout)
      : conn_(std::move(conn)), flush_timeout_(flush_timeout) {}

  Status Publish(std::string_view subject, std::string_view data) override {
    const std::string s(subject);
    return PublishStatus(
        natsConnection_Publish(conn_->get(), s.c_str(), data.data(), static_cast<int>(data.size())),
        subject);
  }

  Result<std::unique_ptr<Subscription>> Subscribe(const std::string& subject,
                                                  const std::string& queue,
                                                  RawHandler handler) override {
    return internal::SubscribeNatsRaw(conn_, subject, queue, std::move(handler), flush_timeout_);
  }

  Result<std::string> Request(const std::string& subject, std::string_view data,
                              std::chrono::milliseconds timeout) override {
    natsMsg* raw = nullptr;
    natsStatus s = natsConnection_Request(&raw, conn_->get(), subject.c_str(), data.data(),
                                          static_cast<int>(data.size()), timeout.count());
    if (s == NATS_TIMEOUT) return Status::Timeout("no reply to " + subject + " in time");
    if (s == NATS_NO_RESPONDERS) return Status::Unavailable("no responder on " + subject);
    if (s != NATS_OK) return FromNats(s, "request on " + subject);
    internal::NatsMsgPtr msg(raw);
    return std::string(natsMsg_GetData(raw), static_cast<size_t>(natsMsg_GetDataLength(raw)));
  }

  Result<std::vector<std::string>> RequestAll(const std::string& subject, std::string_view data,
                                              std::chrono::milliseconds wait,
                                              size_t max_replies) override {
    natsInbox* raw_inbox = nullptr;
    if (natsInbox_Create(&raw_inbox) != NATS_OK) return Status::Internal("natsInbox_Create");
    const std::string inbox(raw_inbox);
    natsInbox_Destroy(raw_inbox);
    // Shared with the handler, which may run until the subscription is gone.
    struct Replies {
      std::mutex mu;
      std::condition_variable cv;
      std::vector<std::string> bodies;
    };
    auto replies = std::make_shared<Replies>();
    auto sub = Subscribe(inbox, "", [replies](const RawMessage& m) {
      std::lock_guard lock(replies->mu);
      replies->bodies.emplace_back(m.data);
      replies->cv.notify_all();
    });
    if (!sub.ok()) return sub.status();
    SB_RETURN_IF_ERROR(
        PublishStatus(natsConnection_PublishRequest(conn_->get(), subject.c_str(), inbox.c_str(),
                                                    data.data(), static_cast<int>(data.size())),
                      subject));
    {
      std::unique_lock lock(replies->mu);
      replies->cv.wait_for(
          lock, wait, [&] { return max_replies > 0 && replies->bodies.size() >= max_replies; });
    }
    sub->reset();  // no handler call runs after this
    std::lock_guard lock(replies->mu);
    return std::move(replies->bodies);
  }

  Status Flush(std::chrono::milliseconds timeout) override {
    natsStatus s = natsConnection_FlushTimeout(conn_->get(), timeout.count());
    return s == NATS_OK ? Status::Ok() : FromNats(s, "flush");
  }

  ConnectionState State() const override {
    switch (natsConnection_Status(conn_->get())) {
      case NATS_CONN_STATUS_CONNECTED:
        return ConnectionState::kConnected;
      case NATS_CONN_STATUS_CLOSED:
        return ConnectionState::kClosed;
      default:
        return ConnectionState::kReconnecting;
    }
  }

  std::string ConnectedUrl() const override {
    char url[512] = {0};
    if (natsConnection_GetConnectedUrl(conn_->get(), url, sizeof url) != NATS_OK) return "";
    return url;
  }

  std::string ConnectedServerId() const override {
    char id[256] = {0};
    if (natsConnection_GetConnectedServerId(conn_->get(), id, sizeof id) != NATS_OK) return "";
    return id;
  }

  std::vector<std::string> DiscoveredServers() const override {
    char** servers = nullptr;
    int count = 0;
    if (natsConnection_GetDiscoveredServers(conn_->get(), &servers, &count) != NATS_OK) return {};
    std::vector<std::string> out;
    for (int i = 0; i < count; i++) {
      out.emplace_back(servers[i]);
      free(servers[i]);
    }
    free(servers);
    return out;
  }

 private:
  std::shared_ptr<Connection> conn_;
  std::chrono::milliseconds flush_timeout_;
};

}  // namespace

Result<std::unique_ptr<NatsClient>> NatsClient::Connect(const NatsOptions& options) {
  SB_RETURN_IF_ERROR(ValidateNatsOptions(options));
  auto conn = internal::OpenConnection(options);
  if (!conn.ok()) return conn.status();
  return std::unique_ptr<NatsClient>(
      std::make_unique<NatsClientImpl>(std::move(conn).value(), options.connect_timeout));
}

}  // namespace switchboard::pubsub
