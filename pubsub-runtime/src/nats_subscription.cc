#include "nats_subscription.h"

#include "nats_status.h"
#include "switchboard/common/log.h"
#include "switchboard/pubsub/codec.h"
#include "switchboard/pubsub/compression.h"

namespace switchboard::pubsub::internal {
namespace {

constexpr const char* kLogger = "pubsub.nats";

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

}  // namespace

Result<std::unique_ptr<Subscription>> SubscribeNats(std::shared_ptr<Connection> conn,
                                                    const std::string& subject, Handler handler,
                                                    size_t max_decompressed,
                                                    std::chrono::milliseconds flush_timeout) {
  if (!handler) return Status::InvalidArgument("subscribe: handler must not be empty");
  auto state = std::make_shared<SubState>();
  state->subject = subject;
  state->handler = std::move(handler);
  state->max_decompressed = max_decompressed;
  auto* holder = new SubHolder(state);
  natsSubscription* raw = nullptr;
  natsStatus s = natsConnection_Subscribe(&raw, conn->get(), subject.c_str(), OnMessage, holder);
  if (s != NATS_OK) {
    delete holder;
    return FromNats(s, "subscribe to " + subject);
  }
  internal::NatsSubscriptionPtr sub(raw);
  // Room for several max-size messages, like the Go client's defaults.
  natsSubscription_SetPendingLimits(raw, 512 * 1024, 256 * 1024 * 1024);
  s = natsSubscription_SetOnCompleteCB(raw, OnSubscriptionComplete, holder);
  if (s != NATS_OK) {
    Status err = FromNats(s, "subscribe to " + subject);
    natsSubscription_Unsubscribe(raw);
    // `holder` may still be used by an in-flight callback: leak it.
    return err;
  }
  auto result = std::make_unique<NatsSubscription>(conn, sub.release(), state);
  // Interest must exist on the server before Subscribe returns; the round
  // trip also brings the server's refusal if the user may not subscribe
  // here (then `result` unsubscribes as it goes).
  s = natsConnection_FlushTimeout(conn->get(), flush_timeout.count());
  if (s != NATS_OK) return FromNats(s, "subscribe to " + subject + ": flush");
  SB_RETURN_IF_ERROR(conn->TakeRefusal("Subscription to \"" + subject + "\""));
  return std::unique_ptr<Subscription>(std::move(result));
}

}  // namespace switchboard::pubsub::internal
