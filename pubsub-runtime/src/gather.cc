#include "switchboard/pubsub/gather.h"

#include "nats_connection.h"
#include "nats_status.h"

namespace switchboard::pubsub {

using internal::NatsMsgPtr;
using internal::NatsSubscriptionPtr;

Result<std::vector<std::string>> Gather(const GatherOptions& options) {
  if (options.connection.urls.empty()) {
    return Status::InvalidArgument("urls: at least one NATS URL is required");
  }
  if (options.subject.empty()) return Status::InvalidArgument("subject: required");
  auto conn = internal::OpenConnection(options.connection);
  if (!conn.ok()) return conn.status();
  natsConnection* nc = (*conn)->get();

  natsInbox* raw_inbox = nullptr;
  if (natsStatus s = natsInbox_Create(&raw_inbox); s != NATS_OK)
    return internal::FromNats(s, "inbox");
  const std::string inbox = raw_inbox;
  natsInbox_Destroy(raw_inbox);

  // A synchronous subscription: no callback can outlive this call.
  natsSubscription* raw_sub = nullptr;
  if (natsStatus s = natsConnection_SubscribeSync(&raw_sub, nc, inbox.c_str()); s != NATS_OK) {
    return internal::FromNats(s, "subscribe to the reply inbox");
  }
  NatsSubscriptionPtr sub(raw_sub);
  const auto deadline = std::chrono::steady_clock::now() + options.window;
  if (natsStatus s =
          natsConnection_PublishRequest(nc, options.subject.c_str(), inbox.c_str(),
                                        options.body.data(), static_cast<int>(options.body.size()));
      s != NATS_OK) {
    natsSubscription_Unsubscribe(sub.get());
    (*conn)->Retire(std::move(sub), options.connection.connect_timeout);
    return internal::FromNats(s, "publish " + options.subject);
  }
  std::vector<std::string> replies;
  while (replies.size() < options.max_replies) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    natsMsg* raw_msg = nullptr;
    natsStatus s = natsSubscription_NextMsg(&raw_msg, sub.get(), left.count());
    if (s != NATS_OK) break;  // the window ended (NATS_TIMEOUT) or the connection went
    NatsMsgPtr msg(raw_msg);
    replies.emplace_back(natsMsg_GetData(msg.get()),
                         static_cast<size_t>(natsMsg_GetDataLength(msg.get())));
  }
  natsSubscription_Unsubscribe(sub.get());
  (*conn)->Retire(std::move(sub), options.connection.connect_timeout);
  return replies;
}

}  // namespace switchboard::pubsub
