#include "account_syncs.h"

#include <algorithm>
#include <ctime>
#include <nlohmann/json.hpp>
#include <utility>

#include "switchboard/common/log.h"
#include "switchboard/natsauth/nkey.h"
#include "switchboard/operator_logic/account_sync.h"
#include "switchboard/pubsub/nats_client.h"

namespace switchboard::operator_controller {
namespace logic = ::switchboard::operator_logic;
using nlohmann::json;

struct AccountSyncs::Confirmed {
  std::mutex mu;
  // server key -> account key -> AccountContent the resolvers were seen to
  // hold; guarded by mu.
  std::map<std::string, std::map<std::string, std::string>> by_server;
};

namespace {

int64_t UnixNow() { return static_cast<int64_t>(std::time(nullptr)); }

// A $SYS.REQ.CLAIMS.* reply: OK for data.code 200, else the server's words.
Status ClaimsReply(const Result<std::string>& reply, const std::string& what) {
  if (!reply.ok()) return Status(reply.status().code(), what + ": " + reply.status().message());
  json j = json::parse(*reply, nullptr, false);
  if (!j.is_object()) return Status::Internal(what + ": the reply is not JSON");
  if (j.contains("error") && j["error"].is_object()) {
    return Status::FailedPrecondition(what + ": " + j["error"].value("description", "refused"));
  }
  const json& data = j.contains("data") ? j["data"] : json();
  if (data.is_object() && data.value("code", 0) == 200) return Status::Ok();
  return Status::Internal(what + ": unexpected reply " + j.dump().substr(0, 200));
}

}  // namespace

std::string AccountContent(const natsauth::AccountClaims& c) {
  std::string out = c.claims.subject + "|" + c.claims.name + "|" + std::to_string(c.limits.subs) +
                    "|" + std::to_string(c.limits.data) + "|" + std::to_string(c.limits.payload) +
                    "|" + std::to_string(c.limits.conn);
  for (const auto& k : c.signing_keys) out += "|s:" + k;
  for (const auto& u : c.authorization.auth_users) out += "|u:" + u;
  for (const auto& a : c.authorization.allowed_accounts) out += "|a:" + a;
  return out;
}

AccountSyncs::AccountSyncs(std::function<void(const std::string&)> on_done)
    : confirmed_(std::make_shared<Confirmed>()),
      jobs_(
          1,
          [this](const AccountSyncJob& job) {
            KeyedJobs<AccountSyncJob, AccountSyncOutcome>::Ran ran;
            ran.outcome = RunOnce(job);
            return ran;
          },
          std::move(on_done)) {}

AccountSyncs::~AccountSyncs() { Stop(); }

std::vector<std::string> AccountSyncs::Submit(const std::string& key, AccountSyncJob job) {
  std::shared_ptr<AccountLookups> lookups;
  std::vector<std::string> added;
  {
    std::lock_guard lock(lookups_mu_);
    wanted_.insert(key);
    std::shared_ptr<const DesiredAccounts>& latest = latest_[key];
    // Before the first submission nobody waits (MayHandOut): none to wake.
    if (latest) {
      for (const auto& [account, claims] : *job.desired) {
        if (!latest->count(account)) added.push_back(account);
      }
    }
    latest = job.desired;
    auto it = lookups_.find(key);
    if (it != lookups_.end() && it->second->fingerprint() == job.lookups_fingerprint) {
      lookups = it->second;
    }
  }
  if (lookups) {
    if (Status s = AnswerLatest(key, *lookups); !s.ok()) {
      log::Warn("server", "account lookups: cannot sign an answer",
                {{"key", key}, {"error", s.message()}});
    }
  }
  jobs_.Submit(key, std::move(job));
  return added;
}

bool AccountSyncs::MayHandOut(const std::string& key, const std::string& account) const {
  {
    std::lock_guard lock(lookups_mu_);
    auto it = latest_.find(key);
    if (it == latest_.end() || it->second->count(account) > 0) return true;
  }
  auto last = jobs_.Latest(key);
  return !last || !last->status.ok();
}

Status AccountSyncs::AnswerLatest(const std::string& key, AccountLookups& lookups) {
  std::lock_guard answering(answer_mu_);
  std::shared_ptr<const DesiredAccounts> desired;
  {
    std::lock_guard lock(lookups_mu_);
    auto it = latest_.find(key);
    if (it == latest_.end()) return Status::Ok();  // forgotten meanwhile
    desired = it->second;
  }
  return lookups.Answer(*desired);
}

std::vector<std::string> AccountSyncs::StillUndesired(const std::string& key,
                                                      std::vector<std::string> remove) {
  std::lock_guard lock(lookups_mu_);
  auto it = latest_.find(key);
  if (it == latest_.end()) return remove;
  const DesiredAccounts& desired = *it->second;
  std::erase_if(remove, [&](const std::string& account) { return desired.count(account) > 0; });
  return remove;
}

void AccountSyncs::Forget(const std::string& key) {
  jobs_.Forget(key);
  {
    std::lock_guard lock(confirmed_->mu);
    confirmed_->by_server.erase(key);
  }
  std::shared_ptr<AccountLookups> gone;  // closed outside the lock
  std::lock_guard lock(lookups_mu_);
  wanted_.erase(key);
  latest_.erase(key);
  if (auto it = lookups_.find(key); it != lookups_.end()) {
    gone = std::move(it->second);
    lookups_.erase(it);
  }
}

void AccountSyncs::Stop() {
  jobs_.Stop();
  std::map<std::string, std::shared_ptr<AccountLookups>> gone;
  std::lock_guard lock(lookups_mu_);
  gone.swap(lookups_);
  wanted_.clear();
  latest_.clear();
}

std::shared_ptr<AccountLookups> AccountSyncs::LookupsFor(const AccountSyncJob& job) {
  {
    std::lock_guard lock(lookups_mu_);
    auto it = lookups_.find(job.server_key);
    if (it != lookups_.end() && it->second->fingerprint() == job.lookups_fingerprint) {
      return it->second;
    }
  }
  // Connected off the lock (it may take the connect timeout).
  auto started = AccountLookups::Start(job.lookups_connection, job.operator_seed,
                                       job.lookups_fingerprint, job.server_key);
  if (!started.ok()) {
    log::Warn("server", "account lookups not answered: cannot connect",
              {{"key", job.server_key}, {"error", started.status().message()}});
    return nullptr;
  }
  std::shared_ptr<AccountLookups> made = std::move(started).value();
  std::shared_ptr<AccountLookups> replaced;  // closed outside the lock
  std::lock_guard lock(lookups_mu_);
  if (!wanted_.count(job.server_key)) return nullptr;
  replaced = std::exchange(lookups_[job.server_key], made);
  return made;
}

AccountSyncOutcome AccountSyncs::RunOnce(const AccountSyncJob& job) {
  AccountSyncOutcome out;
  out.fingerprint = job.fingerprint;
  auto done = [&](Status s) {
    out.status = std::move(s);
    out.at = std::chrono::steady_clock::now();
    return out;
  };
  auto client = pubsub::NatsClient::Connect(job.connection);
  if (!client.ok()) {
    out.authorizer_replies = client.status();
    return done(client.status());
  }
  pubsub::NatsClient& nc = **client;
  const DesiredAccounts& desired = *job.desired;
  if (auto lookups = LookupsFor(job)) {
    if (Status s = AnswerLatest(job.server_key, *lookups); !s.ok()) {
      log::Warn("server", "account lookups: cannot sign an answer",
                {{"key", job.server_key}, {"error", s.message()}});
    }
    if (const uint64_t n = lookups->TakeAnswered(); n > 0) {
      log::Info("server", "servers' account lookups answered",
                {{"key", job.server_key}, {"lookups", std::to_string(n)}});
    }
  }
  if (!job.ping_subject.empty()) {
    out.authorizer_replies = nc.RequestAll(job.ping_subject, job.ping_body, job.window);
  }

  // What every server that answered lists.
  auto lists = nc.RequestAll("$SYS.REQ.CLAIMS.LIST", "", job.window);
  if (!lists.ok()) return done(lists.status());
  std::map<std::string, int> count;
  for (const auto& text : *lists) {
    json reply = json::parse(text, nullptr, false);
    if (!reply.is_object() || !reply.contains("data") || !reply["data"].is_array()) continue;
    ++out.servers;
    for (const auto& k : reply["data"]) {
      if (k.is_string()) ++count[k.get<std::string>()];
    }
  }
  if (out.servers == 0) {
    return done(Status::Unavailable(
        "no NATS server answered $SYS.REQ.CLAIMS.LIST: is the server in operator mode with a "
        "full account resolver (the config this NatsServer's Secret holds)?"));
  }

  auto op = natsauth::KeyPair::FromSeed(job.operator_seed);
  if (!op.ok()) return done(Status::InvalidArgument("the operator seed does not decode"));

  logic::AccountSyncInput in;
  in.desired = desired;
  in.keep = job.keep;
  in.operator_key = op->public_key();
  in.now = UnixNow();
  std::map<std::string, std::string> confirmed;
  {
    std::lock_guard lock(confirmed_->mu);
    confirmed = confirmed_->by_server[job.server_key];
  }
  for (const auto& [key, n] : count) {
    auto want = desired.find(key);
    // A desired account some server lacks is missing (pushed again); one
    // that is not desired goes wherever it is listed.
    if (want != desired.end() && n != out.servers) continue;
    in.stored[key] = std::nullopt;
    auto seen = confirmed.find(key);
    if (want != desired.end() && seen != confirmed.end() &&
        seen->second == AccountContent(want->second)) {
      // Confirmed earlier with this content: stands in for a lookup.
      auto jwt = natsauth::EncodeAccountClaims(want->second, *op);
      if (jwt.ok()) in.stored[key] = std::move(jwt).value();
    }
  }
  logic::AccountSyncPlan plan = logic::PlanAccountSync(in);
  for (const auto& key : plan.look_up) {
    auto jwt = nc.Request("$SYS.REQ.ACCOUNT." + key + ".CLAIMS.LOOKUP", "", job.request_timeout);
    ++out.looked_up;
    // An account whose lookup fails stays listed-only: the plan pushes it
    // (a push of what is desired is always safe).
    in.stored[key] = jwt.ok() ? std::optional<std::string>(*jwt) : std::string();
  }
  if (!plan.look_up.empty()) plan = logic::PlanAccountSync(in);

  Status first = Status::Ok();
  std::map<std::string, std::string> now_confirmed;
  for (const auto& [key, claims] : desired) {
    if (in.stored.count(key)) now_confirmed[key] = AccountContent(claims);
  }
  for (const auto& p : plan.push) {
    now_confirmed.erase(p.account);
    auto jwt = natsauth::EncodeAccountClaims(desired.at(p.account), *op);
    if (!jwt.ok()) {
      if (first.ok()) first = jwt.status();
      continue;
    }
    Status s = ClaimsReply(nc.Request("$SYS.REQ.CLAIMS.UPDATE", *jwt, job.request_timeout),
                           "pushing account " + p.account);
    if (!s.ok()) {
      if (first.ok()) first = s;
      continue;
    }
    ++out.pushed;
    now_confirmed[p.account] = AccountContent(desired.at(p.account));
  }
  // Read at the last moment: an account desired since this run began (and
  // perhaps pushed by the lookups already) is not deleted.
  const std::vector<std::string> remove = StillUndesired(job.server_key, plan.remove);
  if (!remove.empty()) {
    auto body = natsauth::EncodeAccountDeleteRequest(remove, *op, UnixNow());
    Status s = body.ok()
                   ? ClaimsReply(nc.Request("$SYS.REQ.CLAIMS.DELETE", *body, job.request_timeout),
                                 "deleting " + std::to_string(remove.size()) + " account(s)")
                   : body.status();
    if (s.ok()) {
      out.removed = static_cast<int>(remove.size());
    } else if (first.ok()) {
      first = s;
    }
  }
  {
    std::lock_guard lock(confirmed_->mu);
    confirmed_->by_server[job.server_key] = std::move(now_confirmed);
  }
  if (out.pushed > 0 || out.removed > 0) {
    log::Info("server", "account resolvers synced",
              {{"key", job.server_key},
               {"pushed", std::to_string(out.pushed)},
               {"removed", std::to_string(out.removed)},
               {"servers", std::to_string(out.servers)}});
  }
  return done(first);
}

}  // namespace switchboard::operator_controller
