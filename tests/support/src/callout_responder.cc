#include "switchboard/testing/callout_responder.h"

#include <gtest/gtest.h>

#include <utility>

namespace switchboard::testing {

CalloutResponder::CalloutResponder(std::unique_ptr<NatsTestClient> client, Answer answer,
                                   std::chrono::milliseconds deadline)
    : client_(std::move(client)), answer_(std::move(answer)), deadline_(deadline) {
  if (!client_ || !client_->connected()) return;
  natsSubscription* sub = nullptr;
  if (natsConnection_QueueSubscribe(&sub, client_->connection(), "$SYS.REQ.USER.AUTH",
                                    "authorizers", &CalloutResponder::OnRequest, this) != NATS_OK) {
    return;
  }
  sub_.reset(sub);
  ok_ = natsSubscription_SetOnCompleteCB(sub_.get(), &CalloutResponder::OnComplete, this) ==
            NATS_OK &&
        natsConnection_Flush(client_->connection()) == NATS_OK;
}

CalloutResponder::~CalloutResponder() {
  if (sub_ && natsSubscription_Unsubscribe(sub_.get()) == NATS_OK) {
    std::unique_lock lock(mu_);
    if (!done_cv_.wait_for(lock, deadline_, [&] { return done_; })) {
      ADD_FAILURE() << "the responder's last callback did not return";
    }
  }
  sub_.reset();
  client_.reset();
}

int CalloutResponder::Count(const std::string& reason) const {
  std::lock_guard lock(mu_);
  auto it = counts_.find(reason);
  return it == counts_.end() ? 0 : it->second;
}

std::vector<std::string> CalloutResponder::Errors() const {
  std::lock_guard lock(mu_);
  return errors_;
}

void CalloutResponder::OnRequest(natsConnection* nc, natsSubscription*, natsMsg* msg,
                                 void* closure) {
  pubsub::internal::NatsMsgPtr owned(msg);
  static_cast<CalloutResponder*>(closure)->Handle(nc, owned.get());
}

void CalloutResponder::OnComplete(void* closure) {
  auto* self = static_cast<CalloutResponder*>(closure);
  std::lock_guard lock(self->mu_);
  self->done_ = true;
  self->done_cv_.notify_all();
}

void CalloutResponder::Handle(natsConnection* nc, natsMsg* msg) {
  const char* reply = natsMsg_GetReply(msg);
  if (reply == nullptr || *reply == '\0') return Fail("a request without a reply subject");
  std::string_view token(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg)));
  Outcome outcome = answer_(token);
  {
    std::lock_guard lock(mu_);
    if (!outcome.reason.empty()) ++counts_[outcome.reason];
    if (!outcome.error.empty()) errors_.push_back(outcome.error);
  }
  if (outcome.reply.empty()) return;
  if (natsConnection_Publish(nc, reply, outcome.reply.data(),
                             static_cast<int>(outcome.reply.size())) != NATS_OK) {
    Fail("publishing the response failed");
  }
}

void CalloutResponder::Fail(std::string what) {
  std::lock_guard lock(mu_);
  errors_.push_back(std::move(what));
}

}  // namespace switchboard::testing
