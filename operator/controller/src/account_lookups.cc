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

AccountLookups::AccountLookups(natsauth::KeyPair op, std::string fingerprint)
    : operator_key_(std::move(op)), fingerprint_(std::move(fingerprint)) {}

AccountLookups::~AccountLookups() {
  sub_.reset();  // no handler call runs after this
  client_.reset();
}

Result<std::unique_ptr<AccountLookups>> AccountLookups::Start(const pubsub::NatsOptions& connection,
                                                              std::string_view operator_seed,
                                                              std::string fingerprint) {
  auto op = natsauth::KeyPair::FromSeed(operator_seed);
  if (!op.ok()) return Status::InvalidArgument("the operator seed does not decode");
  std::unique_ptr<AccountLookups> out(
      new AccountLookups(std::move(op).value(), std::move(fingerprint)));
  auto client = pubsub::NatsClient::Connect(connection);
  if (!client.ok()) return client.status();
  out->client_ = std::move(client).value();
  AccountLookups* self = out.get();
  auto sub = out->client_->Subscribe(kLookups, "",
                                     [self](const pubsub::RawMessage& m) { self->OnLookup(m); });
  if (!sub.ok()) return sub.status();
  out->sub_ = std::move(sub).value();
  return out;
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
