#include "nats_subscription.h"

#include <condition_variable>
#include <mutex>

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
  RawHandler raw;  // set instead of `handler`: the message as it came
  size_t max_decompressed;
  Latch complete;   // nats.c's delivery thread has left its loop
  Message scratch;  // used only inside a delivery (calls never overlap)

  // Deliveries start only while open; Close waits for the one running.
  std::mutex mu;
  std::condition_variable idle;
  bool open = true;            // guarded by mu
  bool running = false;        // guarded by mu
  std::thread::id running_on;  // guarded by mu: the thread of the running delivery

  bool Enter() {
    std::lock_guard lock(mu);
    if (!open) return false;
    running = true;
    running_on = std::this_thread::get_id();
    return true;
  }
  void Leave() {
    std::lock_guard lock(mu);
    running = false;
    idle.notify_all();
  }
  // No delivery starts after this, and none is running when it returns,
  // except the caller's own: true when called from inside a delivery.
  bool Close() {
    std::unique_lock lock(mu);
    open = false;
    if (running && running_on == std::this_thread::get_id()) return true;
    idle.wait(lock, [&] { return !running; });
    return false;
  }

  void Deliver(const char* data, int len) {
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
  internal::NatsMsgPtr owned(msg);  // the handler owns the message, on every path
  SubState& state = **static_cast<SubHolder*>(closure);
  if (!state.Enter()) return;
  try {
    if (state.raw) {
      const char* reply = natsMsg_GetReply(msg);
      state.raw(
          RawMessage{.subject = natsMsg_GetSubject(msg),
                     .reply = reply != nullptr ? reply : "",
                     .data = std::string_view(natsMsg_GetData(msg),
                                              static_cast<size_t>(natsMsg_GetDataLength(msg)))});
    } else {
      state.Deliver(natsMsg_GetData(msg), natsMsg_GetDataLength(msg));
    }
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
  state.Leave();
}

// Called by the delivery thread once it has left its loop: nats.c makes no
// further call with the closure.
void OnSubscriptionComplete(void* closure) noexcept {
  auto* holder = static_cast<SubHolder*>(closure);
  SubHolder keep = std::move(*holder);
  delete holder;
  keep->complete.Set();
}

class NatsSubscription : public Subscription {
 public:
  NatsSubscription(std::shared_ptr<Connection> conn, NatsSubscriptionPtr sub, SubHolder state,
                   std::chrono::milliseconds flush_timeout)
      : conn_(std::move(conn)),
        sub_(std::move(sub)),
        state_(std::move(state)),
        flush_timeout_(flush_timeout) {}
  // The drain's round trip and the emptying of the pending list (dropped,
  // no handler runs) share this deadline. Past it, or when the round trip
  // failed, nats.c closes the subscription as an unsubscribe would.
  int64_t DrainTimeout() const { return 2 * flush_timeout_.count(); }

  ~NatsSubscription() override {
    // No handler call starts from here on: what is still pending is
    // dropped as the delivery thread reaches it. Inside its own handler the
    // delivery thread cannot be waited for.
    const bool own_thread = state_->Close();
    // Drained, not just unsubscribed: UNSUB, a round trip, then the
    // delivery thread empties the pending list before it leaves. An
    // unsubscribe leaves that list to whoever drops the last reference,
    // often the delivery thread after our wait below; nats.c 3.4.1 frees
    // those messages through its garbage collector thread, and one that
    // hands them over after ShutdownNats has stopped that thread loses
    // them (LeakSanitizer saw up to 25 MB in pubsub_cli_test). Fails when
    // the connection is closed, which closed the subscription already.
    // While it is reconnecting no round trip can complete (the drain would
    // wait out its whole deadline) and the server holds no interest to
    // take back: unsubscribed at once.
    const bool connected = natsConnection_Status(conn_->get()) == NATS_CONN_STATUS_CONNECTED;
    if (!connected || natsSubscription_DrainTimeout(sub_.get(), DrainTimeout()) != NATS_OK) {
      natsSubscription_Unsubscribe(sub_.get());
    }
    if (!own_thread) state_->complete.Wait();
    conn_->Retire(std::move(sub_), flush_timeout_);
  }

 private:
  std::shared_ptr<Connection> conn_;
  NatsSubscriptionPtr sub_;
  SubHolder state_;
  std::chrono::milliseconds flush_timeout_;
};

}  // namespace

namespace {

// Subscribes with `state` as the delivery state (plain or queue
// subscription), then flushes and takes the server's refusal.
Result<std::unique_ptr<Subscription>> SubscribeWith(std::shared_ptr<Connection> conn,
                                                    const std::string& subject,
                                                    const std::string& queue, SubHolder state,
                                                    std::chrono::milliseconds flush_timeout) {
  auto* holder = new SubHolder(state);
  natsSubscription* raw = nullptr;
  natsStatus s = queue.empty() ? natsConnection_Subscribe(&raw, conn->get(), subject.c_str(),
                                                          OnMessage, holder)
                               : natsConnection_QueueSubscribe(&raw, conn->get(), subject.c_str(),
                                                               queue.c_str(), OnMessage, holder);
  if (s != NATS_OK) {
    // Not subscribed on the server, nor in the connection's table: nothing
    // was or will be delivered with this closure.
    delete holder;
    return FromNats(s, "subscribe to " + subject);
  }
  NatsSubscriptionPtr sub(raw);
  // Room for several max-size messages, like the Go client's defaults.
  natsSubscription_SetPendingLimits(raw, 512 * 1024, 256 * 1024 * 1024);
  s = natsSubscription_SetOnCompleteCB(raw, OnSubscriptionComplete, holder);
  if (s != NATS_OK) {
    // The connection closed for good in between (nothing else closes a
    // subscription here). Its delivery thread may still be reading the
    // closure, and nothing says when it stops: the closure stays until
    // ShutdownNats has seen every nats.c thread end. No handler call
    // starts after Close, and none is running when it returns.
    Status err = FromNats(s, "subscribe to " + subject);
    natsSubscription_Unsubscribe(raw);
    state->Close();
    KeepUntilShutdown(std::shared_ptr<SubHolder>(holder));
    conn->Retire(std::move(sub), flush_timeout);
    return err;
  }
  auto result = std::make_unique<NatsSubscription>(conn, std::move(sub), state, flush_timeout);
  // Interest must exist on the server before Subscribe returns; the round
  // trip also brings the server's refusal if the user may not subscribe
  // here (then `result` unsubscribes as it goes).
  s = natsConnection_FlushTimeout(conn->get(), flush_timeout.count());
  if (s != NATS_OK) return FromNats(s, "subscribe to " + subject + ": flush");
  SB_RETURN_IF_ERROR(conn->TakeRefusal("Subscription to \"" + subject + "\""));
  return std::unique_ptr<Subscription>(std::move(result));
}

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
  return SubscribeWith(std::move(conn), subject, "", std::move(state), flush_timeout);
}

Result<std::unique_ptr<Subscription>> SubscribeNatsRaw(std::shared_ptr<Connection> conn,
                                                       const std::string& subject,
                                                       const std::string& queue, RawHandler handler,
                                                       std::chrono::milliseconds flush_timeout) {
  if (!handler) return Status::InvalidArgument("subscribe: handler must not be empty");
  auto state = std::make_shared<SubState>();
  state->subject = subject;
  state->raw = std::move(handler);
  return SubscribeWith(std::move(conn), subject, queue, std::move(state), flush_timeout);
}

}  // namespace switchboard::pubsub::internal
