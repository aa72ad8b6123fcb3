#include "account_lookups.h"

#include <vector>

#include "account_syncs.h"
#include "switchboard/common/log.h"
#include "switchboard/operator_logic/account_sync.h"

namespace switchboard::operator_controller {
namespace logic = ::switchboard::operator_logic;

namespace {
constexpr char kLookups[] = "$SYS.REQ.ACCOUNT.*.CLAIMS.LOOKUP";
constexpr char kUpdate[] = "$SYS.REQ.CLAIMS.UPDATE";
}  // namespace

AccountLookups::AccountLookups(natsauth::KeyPair op, std::string fingerprint, std::string key)
    : operator_key_(std::move(op)), fingerprint_(std::move(fingerprint)), key_(std::move(key)) {}

AccountLookups::~AccountLookups() {
  {
    std::lock_guard lock(push_mu_);
    stopping_ = true;
  }
  stop_pushing_ = true;
  push_cv_.notify_all();
  if (pusher_.joinable()) pusher_.join();
  sub_.reset();     // no handler call runs after this
  client_.reset();  // nor a reconnect callback after this
}

Result<std::unique_ptr<AccountLookups>> AccountLookups::Start(const pubsub::NatsOptions& connection,
                                                              std::string_view operator_seed,
                                                              std::string fingerprint,
                                                              std::string key) {
  auto op = natsauth::KeyPair::FromSeed(operator_seed);
  if (!op.ok()) return Status::InvalidArgument("the operator seed does not decode");
  std::unique_ptr<AccountLookups> out(
      new AccountLookups(std::move(op).value(), std::move(fingerprint), std::move(key)));
  AccountLookups* self = out.get();
  // Before the connection, which may call it as soon as it exists.
  out->pusher_ = std::thread([self] { self->PushAfterReconnects(); });
  pubsub::NatsOptions options = connection;
  options.on_reconnected = [self] { self->Reconnected(); };
  auto client = pubsub::NatsClient::Connect(options);
  if (!client.ok()) return client.status();
  {
    std::lock_guard lock(out->push_mu_);  // the pusher reads it under the lock
    out->client_ = std::move(client).value();
  }
  out->push_cv_.notify_all();
  auto sub = out->client_->Subscribe(kLookups, "",
                                     [self](const pubsub::RawMessage& m) { self->OnLookup(m); });
  if (!sub.ok()) return sub.status();
  out->sub_ = std::move(sub).value();
  return out;
}

void AccountLookups::Reconnected() {
  {
    std::lock_guard lock(push_mu_);
    push_wanted_ = true;
  }
  push_cv_.notify_all();
}

void AccountLookups::PushAfterReconnects() {
  std::unique_lock lock(push_mu_);
  for (;;) {
    push_cv_.wait(lock, [this] { return stopping_ || (push_wanted_ && client_); });
    if (stopping_) return;
    push_wanted_ = false;
    pubsub::NatsClient* client = client_.get();  // reset only after this thread ends
    lock.unlock();
    std::vector<std::string> jwts;
    {
      std::lock_guard answers(mu_);
      jwts.reserve(answers_.size());
      for (const auto& [account, answer] : answers_) jwts.push_back(answer.second);
    }
    size_t pushed = 0;
    Status first = Status::Ok();
    for (const auto& jwt : jwts) {
      if (stop_pushing_) break;
      Status s = client->Publish(kUpdate, jwt);
      if (s.ok()) {
        ++pushed;
      } else if (first.ok()) {
        first = s;  // disconnected again: the next reconnect pushes again
      }
    }
    pushes_after_reconnect_.fetch_add(1);
    if (first.ok()) {
      log::Info("server", "reconnected: every desired account pushed to the account resolvers",
                {{"key", key_}, {"accounts", std::to_string(pushed)}});
    } else {
      log::Warn("server", "reconnected: not every desired account pushed",
                {{"key", key_},
                 {"accounts", std::to_string(pushed)},
                 {"of", std::to_string(jwts.size())},
                 {"error", first.message()}});
    }
    lock.lock();
  }
}

Status AccountLookups::Answer(const std::map<std::string, natsauth::AccountClaims>& desired) {
  // Signed outside the lock: the handler only ever waits for a map swap.
  std::map<std::string, std::pair<std::string, std::string>> next;
  {
    std::lock_guard lock(mu_);
    for (const auto& [key, claims] : desired) {
      auto it = answers_.find(key);
      if (it != answers_.end() && it->second.first == AccountContent(claims))
        next[key] = it->second;
    }
  }
  Status first = Status::Ok();
  std::vector<std::string> changed;  // JWTs new or changed since the last call
  for (const auto& [key, claims] : desired) {
    if (next.count(key)) continue;
    auto jwt = natsauth::EncodeAccountClaims(claims, operator_key_);
    if (!jwt.ok()) {
      if (first.ok()) first = jwt.status();
      continue;
    }
    changed.push_back(*jwt);
    next[key] = {AccountContent(claims), std::move(jwt).value()};
  }
  {
    std::lock_guard lock(mu_);
    answers_.swap(next);
  }
  // A new installation's account goes to every store now, not at the next
  // sync run (seconds away): its engines may connect as soon as their
  // Secret is written, and a server that has the account never asks. Not
  // on the first call, which fills the answers with every account (the
  // sync pushes only what the stores lack). No reply is asked for: the
  // sync confirms.
  if (filled_) {
    for (const auto& jwt : changed) {
      if (Status pushed = client_->Publish(kUpdate, jwt); !pushed.ok() && first.ok()) {
        first = pushed;
      }
    }
  }
  filled_ = true;
  return first;
}

void AccountLookups::OnLookup(const pubsub::RawMessage& m) {
  auto account = logic::ServerAccountLookup(m.subject, m.reply);
  if (!account) return;
  std::string jwt;
  {
    std::lock_guard lock(mu_);
    auto it = answers_.find(*account);
    if (it == answers_.end()) return;  // not an installation's: the servers answer
    jwt = it->second.second;
  }
  Status replied = client_->Publish(m.reply, jwt);
  // The same JWT to every store, in case this reply came too late for the
  // server that asked (its peers' empty replies first): the client's next
  // attempt then finds it. No reply is asked for; the sync confirms.
  Status pushed = client_->Publish(kUpdate, jwt);
  if (replied.ok()) answered_.fetch_add(1);
  if (!replied.ok() || !pushed.ok()) {
    log::Warn("server", "account lookup not answered",
              {{"account", *account}, {"error", (replied.ok() ? pushed : replied).message()}});
  }
}

}  // namespace switchboard::operator_controller
