#include "switchboard/testing/nats_client.h"

#include <cstdlib>
#include <cstring>
#include <utility>

#include "switchboard/pubsub/nats_pubsub.h"

namespace switchboard::testing {
namespace {

std::string Body(natsMsg* msg) {
  return std::string(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg)));
}

}  // namespace

NatsTestClient::NatsTestClient(const std::string& url, const std::string& user,
                               const std::string& password, const std::string& ca_pem,
                               std::chrono::milliseconds deadline)
    : deadline_(deadline) {
  Connect(url, ca_pem, [&](natsOptions* opts) {
    return natsOptions_SetUserInfo(opts, user.c_str(), password.c_str());
  });
}

NatsTestClient::NatsTestClient(const std::string& url, UserJwt credentials,
                               std::chrono::milliseconds deadline)
    : deadline_(deadline), user_jwt_(std::move(credentials)) {
  Connect(url, "", [&](natsOptions* opts) {
    return natsOptions_SetUserCredentialsCallbacks(opts, &NatsTestClient::OnUserJwt, this,
                                                   &NatsTestClient::OnSign, this);
  });
}

NatsTestClient::NatsTestClient(const std::string& url, std::chrono::milliseconds deadline)
    : deadline_(deadline) {
  Connect(url, "", [](natsOptions*) { return NATS_OK; });
}

void NatsTestClient::Connect(const std::string& url, const std::string& ca_pem,
                             const std::function<natsStatus(natsOptions*)>& auth) {
  natsOptions* raw = nullptr;
  if (natsOptions_Create(&raw) != NATS_OK) return;
  pubsub::internal::NatsOptionsPtr opts(raw);
  if (!ca_pem.empty() &&
      (natsOptions_SetSecure(opts.get(), true) != NATS_OK ||
       natsOptions_SetCATrustedCertificates(opts.get(), ca_pem.c_str()) != NATS_OK)) {
    error_ = "setting the CA failed";
    return;
  }
  if (natsOptions_SetURL(opts.get(), url.c_str()) != NATS_OK || auth(opts.get()) != NATS_OK ||
      natsOptions_SetAllowReconnect(opts.get(), false) != NATS_OK ||
      natsOptions_SetTimeout(opts.get(), deadline_.count()) != NATS_OK ||
      natsOptions_SetErrorHandler(opts.get(), &NatsTestClient::OnError, this) != NATS_OK ||
      natsOptions_SetClosedCB(opts.get(), &NatsTestClient::OnClosed, this) != NATS_OK) {
    error_ = "setting options failed";
    return;
  }
  natsConnection* nc = nullptr;
  status_ = natsConnection_Connect(&nc, opts.get());
  if (status_ != NATS_OK) {
    // The calling thread's last error: the server's -ERR text.
    const char* text = nats_GetLastError(nullptr);
    error_ = std::string(natsStatus_GetText(status_)) + ": " + (text ? text : "");
    return;
  }
  nc_.reset(nc);
}

natsStatus NatsTestClient::OnUserJwt(char** jwt, char** error, void* closure) {
  auto* self = static_cast<NatsTestClient*>(closure);
  *jwt = strdup(self->user_jwt_.jwt.c_str());
  if (*jwt == nullptr) {
    *error = strdup("out of memory");
    return NATS_NO_MEMORY;
  }
  return NATS_OK;
}

natsStatus NatsTestClient::OnSign(char** error, unsigned char** signature, int* length,
                                  const char* nonce, void* closure) {
  auto* self = static_cast<NatsTestClient*>(closure);
  std::string sig = self->user_jwt_.sign(nonce);
  if (sig.empty()) {
    *error = strdup("signing the nonce failed");
    return NATS_ERR;
  }
  // nats.c frees it.
  *signature = static_cast<unsigned char*>(malloc(sig.size()));
  if (*signature == nullptr) return NATS_NO_MEMORY;
  memcpy(*signature, sig.data(), sig.size());
  *length = static_cast<int>(sig.size());
  return NATS_OK;
}

NatsTestClient::~NatsTestClient() {
  sub_.reset();
  if (!nc_) return;
  natsConnection_Close(nc_.get());
  EXPECT_TRUE(WaitClosed()) << "no closed callback";
  nc_.reset();
}

bool NatsTestClient::Subscribe(const std::string& subject, const std::string& queue) {
  sub_.reset();
  natsSubscription* sub = nullptr;
  natsStatus s = queue.empty() ? natsConnection_SubscribeSync(&sub, nc_.get(), subject.c_str())
                               : natsConnection_QueueSubscribeSync(&sub, nc_.get(), subject.c_str(),
                                                                   queue.c_str());
  if (s != NATS_OK) return false;
  sub_.reset(sub);
  return natsConnection_Flush(nc_.get()) == NATS_OK;
}

bool NatsTestClient::Publish(const std::string& subject, const std::string& data) {
  return natsConnection_Publish(nc_.get(), subject.c_str(), data.data(),
                                static_cast<int>(data.size())) == NATS_OK &&
         natsConnection_Flush(nc_.get()) == NATS_OK;
}

std::string NatsTestClient::Next() { return Next(deadline_); }

std::string NatsTestClient::Next(std::chrono::milliseconds timeout) {
  natsMsg* raw = nullptr;
  if (!sub_ || natsSubscription_NextMsg(&raw, sub_.get(), timeout.count()) != NATS_OK) return "";
  pubsub::internal::NatsMsgPtr msg(raw);
  return Body(msg.get());
}

std::optional<NatsTestClient::Message> NatsTestClient::NextMessage() {
  natsMsg* raw = nullptr;
  if (!sub_ || natsSubscription_NextMsg(&raw, sub_.get(), deadline_.count()) != NATS_OK) {
    return std::nullopt;
  }
  pubsub::internal::NatsMsgPtr msg(raw);
  const char* reply = natsMsg_GetReply(msg.get());
  return Message{natsMsg_GetSubject(msg.get()), reply ? reply : "", Body(msg.get())};
}

std::string NatsTestClient::Request(const std::string& subject, const std::string& body) {
  natsMsg* raw = nullptr;
  if (natsConnection_RequestString(&raw, nc_.get(), subject.c_str(), body.c_str(),
                                   deadline_.count()) != NATS_OK) {
    return "";
  }
  pubsub::internal::NatsMsgPtr msg(raw);
  return Body(msg.get());
}

std::vector<std::string> NatsTestClient::RequestMany(const std::string& subject,
                                                     const std::string& body, size_t count) {
  std::vector<std::string> replies;
  natsInbox* inbox = nullptr;
  if (natsInbox_Create(&inbox) != NATS_OK) return replies;
  std::string reply(inbox);
  natsInbox_Destroy(inbox);
  natsSubscription* raw = nullptr;
  if (natsConnection_SubscribeSync(&raw, nc_.get(), reply.c_str()) != NATS_OK) return replies;
  pubsub::internal::NatsSubscriptionPtr sub(raw);
  if (natsConnection_PublishRequestString(nc_.get(), subject.c_str(), reply.c_str(),
                                          body.c_str()) != NATS_OK ||
      natsConnection_Flush(nc_.get()) != NATS_OK) {
    return replies;
  }
  auto deadline = std::chrono::steady_clock::now() + deadline_;
  while (replies.size() < count) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    natsMsg* msg = nullptr;
    if (left.count() <= 0 || natsSubscription_NextMsg(&msg, sub.get(), left.count()) != NATS_OK) {
      break;
    }
    pubsub::internal::NatsMsgPtr owned(msg);
    replies.push_back(Body(owned.get()));
  }
  natsSubscription_Unsubscribe(sub.get());
  return replies;
}

bool NatsTestClient::WaitForError(const std::string& needle) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, deadline_, [&] {
    for (const auto& e : errors_) {
      if (e.find(needle) != std::string::npos) return true;
    }
    return false;
  });
}

bool NatsTestClient::WaitClosed() {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, deadline_, [&] { return closed_; });
}

std::vector<std::string> NatsTestClient::errors() const {
  std::lock_guard lock(mu_);
  return errors_;
}

void NatsTestClient::OnError(natsConnection* nc, natsSubscription*, natsStatus err, void* closure) {
  auto* self = static_cast<NatsTestClient*>(closure);
  const char* text = nullptr;
  natsConnection_GetLastError(nc, &text);
  std::lock_guard lock(self->mu_);
  self->errors_.push_back(std::string(natsStatus_GetText(err)) + ": " + (text ? text : ""));
  self->cv_.notify_all();
}

void NatsTestClient::OnClosed(natsConnection*, void* closure) {
  auto* self = static_cast<NatsTestClient*>(closure);
  std::lock_guard lock(self->mu_);
  self->closed_ = true;
  self->cv_.notify_all();
}

void NatsLibraryTest::SetUpTestSuite() {
  library_ = std::make_unique<pubsub::internal::NatsLibraryUse>();
}

void NatsLibraryTest::TearDownTestSuite() {
  library_.reset();
  EXPECT_TRUE(pubsub::ShutdownNats().ok());
}

}  // namespace switchboard::testing
