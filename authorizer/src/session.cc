#include "switchboard/authorizer/session.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "switchboard/api/constants.h"
#include "switchboard/authorizer/answer.h"
#include "switchboard/authorizer/connz.h"
#include "switchboard/authorizer/members.h"
#include "switchboard/authorizer/operator_mode.h"
#include "switchboard/common/log.h"

namespace switchboard::authorizer {
namespace {

constexpr const char* kLogger = "authorizer";
// The loop looks at its connections at least this often (health, metrics).
constexpr std::chrono::milliseconds kTick{1000};

namespace logic = operator_logic;
using pubsub::ConnectionState;

// nats.c reports a failed handshake or verification as NATS_SSL_ERROR (and a
// server that wants TLS from a client without it as "secure connection
// required" or "not available"); the runtime keeps its text in the message.
bool IsTlsFailure(std::string_view message) {
  std::string lower(message);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (std::string_view needle : {"ssl", "certificate", "handshake", "secure connection"}) {
    if (lower.find(needle) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

// The connection to one server. `client` and `sub` are replaced by the
// loop thread only, under mu_; the subscription goes before its client
// (its handler holds the client weakly; a queued request holds it).
struct ServerSession::Member {
  std::string url;
  std::shared_ptr<pubsub::NatsClient> client;  // null until a connect succeeded
  std::unique_ptr<pubsub::Subscription> sub;
  std::string server_id;  // as of the loop's last look
  std::optional<logic::Time> unwanted_since;
  std::chrono::steady_clock::time_point next_connect{};
  std::string error;
  bool tls_failed = false;
  // The login `client` was made with (LoginsOf): null is config mode.
  std::shared_ptr<const OperatorMode> login;
  bool other_isolation = false;  // not the served isolation's login
};

ServerSession::ServerSession(std::shared_ptr<const ServedServer> served, SessionOptions options,
                             Metrics* metrics)
    : options_(std::move(options)),
      metrics_(metrics),
      ns_(served->ns),
      name_(served->name),
      served_(std::move(served)) {
  if (metrics_) metrics_->StartServer(ns_, name_);
  const int workers = std::max(1, options_.request_workers);
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { Work(); });
  loop_ = std::thread([this] { Loop(); });
}

ServerSession::~ServerSession() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  loop_.join();
  // Drain: no request arrives once the subscriptions are gone; the workers
  // answer what is queued (the server still waits for those), then stop.
  std::map<std::string, std::unique_ptr<Member>> members;
  {
    std::lock_guard lock(mu_);
    members = std::move(members_);
  }
  for (auto& [url, m] : members) m->sub.reset();
  {
    std::lock_guard lock(qmu_);
    draining_ = true;
  }
  qcv_.notify_all();
  for (auto& w : workers_) w.join();
  system_.reset();
  members.clear();
  if (metrics_) metrics_->ForgetServer(ns_, name_);
}

void ServerSession::Update(std::shared_ptr<const ServedServer> served) {
  bool narrows = false;
  {
    std::lock_guard lock(mu_);
    narrows = NarrowsAccess(*served_->directory, *served->directory);
    served_ = std::move(served);
    if (narrows) sweep_requested_ = true;
  }
  if (narrows) cv_.notify_all();
}

std::shared_ptr<const ServedServer> ServerSession::served() const {
  std::lock_guard lock(mu_);
  return served_;
}

void ServerSession::RequestSweep() {
  {
    std::lock_guard lock(mu_);
    sweep_requested_ = true;
  }
  cv_.notify_all();
}

void ServerSession::Wake() { cv_.notify_all(); }

SessionHealth ServerSession::Health() const {
  std::lock_guard lock(mu_);
  SessionHealth h = health_;
  // Live, not as of the loop's last look: nats.c may be reconnecting now.
  std::set<std::string> servers, other_isolation;
  bool all_subscribed = true, any_tls_failed = false;
  for (const auto& [url, m] : members_) {
    MemberHealth mh{.url = url, .error = m->error};
    const bool connected = m->client && m->client->State() == ConnectionState::kConnected;
    if (connected) {
      mh.server_id = m->client->ConnectedServerId();
      mh.subscribed = m->sub != nullptr;
      mh.other_isolation = m->other_isolation;
      h.connected = true;
      all_subscribed &= mh.subscribed;
      if (mh.subscribed && !mh.server_id.empty()) {
        servers.insert(mh.server_id);
        if (mh.other_isolation) other_isolation.insert(mh.server_id);
      }
    }
    any_tls_failed |= m->tls_failed;
    if (h.error.empty()) h.error = m->error;
    h.members.push_back(std::move(mh));
  }
  h.subscribed = h.connected && all_subscribed;
  h.servers = static_cast<int>(servers.size());
  h.other_isolation = static_cast<int>(other_isolation.size());
  h.tls_failed = !h.connected && any_tls_failed;
  return h;
}

int ServerSession::Sweeps() const {
  std::lock_guard lock(mu_);
  return sweeps_;
}

int ServerSession::Kicks() const {
  std::lock_guard lock(mu_);
  return kicks_;
}

pubsub::NatsOptions ServerSession::ConnectOptions(const logic::Credentials& who,
                                                  const std::string& name,
                                                  const std::shared_ptr<const OperatorMode>& mode) {
  pubsub::NatsOptions o;
  o.urls = served()->urls;
  o.username = who.username;
  o.password = who.password;
  if (mode) {
    if (Status s = UseOperatorModeUser(o, *mode, who.username == api::kCalloutSystemUsername);
        !s.ok()) {
      log::Warn(kLogger, "cannot make the operator-mode user JWT",
                {{"server", ns_ + "/" + name_}, {"error", s.message()}});
    }
  }
  // With a CA, TLS is required whatever the URL's scheme, and that CA is the
  // only one trusted.
  o.ca_pem = served()->ca;
  o.name = name;
  o.connect_timeout = options_.connect_timeout;
  o.reconnect_wait = options_.reconnect_wait;
  // Closed for good (the server refused us on reconnect): the loop makes
  // a new connection.
  o.on_error = [this](const Status& s) {
    if (s.code() == StatusCode::kUnavailable) Wake();
  };
  return o;
}

void ServerSession::Loop() {
  logic::Time next_sweep = options_.clock();  // at once: closes what went while no one watched
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
    }
    EnsureSystem();
    PlanMembers();
    std::vector<std::string> urls;
    {
      std::lock_guard lock(mu_);
      for (const auto& [url, m] : members_) urls.push_back(url);
    }
    for (const auto& url : urls) EnsureSubscribed(url);
    if (metrics_) {
      SessionHealth h = Health();
      metrics_->SetSubscribed(ns_, name_, h.connected && h.subscribed);
      metrics_->SetSubscribedServers(ns_, name_, h.servers);
      metrics_->SetOtherIsolationServers(ns_, name_, h.other_isolation);
    }
    bool due = false;
    {
      std::lock_guard lock(mu_);
      due = sweep_requested_ || options_.clock() >= next_sweep;
      if (due) sweep_requested_ = false;
    }
    if (due && Health().connected) {
      // Connected to NATS but not as the system user (EnsureSystem logged
      // why): a failed sweep, as any other.
      Status s = system_ && system_->State() == ConnectionState::kConnected
                     ? Sweep()
                     : Status::Unavailable("not connected as " + served()->system.username);
      if (!s.ok()) {
        log::Warn(kLogger, "sweep failed; retrying",
                  {{"server", ns_ + "/" + name_}, {"error", s.message()}});
      }
      if (metrics_) metrics_->ObserveSweep(ns_, name_, s.ok());
      logic::Time now = options_.clock();
      next_sweep = now + (s.ok() ? options_.sweep_interval : options_.reconnect_wait);
      // A suspect is looked at again once it may be closed; a retiring
      // password's connections when it retires.
      for (const auto& [key, since] : suspects_) {
        next_sweep = std::min(next_sweep, since + options_.kick_after);
      }
      if (auto r = NextRetirement(*served()->directory, now)) next_sweep = std::min(next_sweep, *r);
      std::lock_guard lock(mu_);
      ++sweeps_;
    }
    std::unique_lock lock(mu_);
    auto wait =
        std::chrono::duration_cast<std::chrono::milliseconds>(next_sweep - options_.clock());
    // A member waiting to connect again is looked at when it is due.
    wait = std::clamp(wait, std::chrono::milliseconds(0), std::min(kTick, options_.reconnect_wait));
    cv_.wait_for(lock, wait, [&] { return stopping_ || sweep_requested_; });
  }
}

Result<std::unique_ptr<pubsub::NatsClient>> ServerSession::ConnectAs(
    const logic::Credentials& who, const std::string& name, const std::string& pinned_url,
    std::shared_ptr<const OperatorMode>& login) {
  std::optional<Status> first;
  const std::vector<std::shared_ptr<const OperatorMode>> logins = LoginsOf(*served());
  for (const auto& mode : logins) {
    pubsub::NatsOptions o = ConnectOptions(who, name, mode);
    if (!pinned_url.empty()) {
      o.urls = pinned_url;
      o.pinned = true;
    }
    // The other isolation's login is for a server not restarted since the
    // switch: once it restarts (into the served isolation) it refuses that
    // login, and a reconnect with it would be refused, perhaps for ever
    // (when the refusal is the callout's timeout). Connecting again here
    // tries the served isolation's login first.
    o.reconnect = mode == logins.front();
    auto c = pubsub::NatsClient::Connect(o);
    if (c.ok()) {
      login = mode;
      return c;
    }
    if (!first) first = c.status();
    // Nothing listening, or TLS: no other login fares better.
    if (c.status().code() == StatusCode::kUnavailable) break;
  }
  return *first;
}

void ServerSession::EnsureSystem() {
  if (system_ && system_->State() == ConnectionState::kClosed) system_.reset();
  if (system_ || std::chrono::steady_clock::now() < next_system_connect_) return;
  next_system_connect_ = std::chrono::steady_clock::now() + options_.reconnect_wait;
  auto served = this->served();
  auto c = ConnectAs(served->system, std::string(api::kAuthorizerUsername) + "-sweep", "",
                     system_login_);
  if (!c.ok()) {
    // Without it the members are the seeds only, and no sweep runs.
    log::Warn(kLogger, "cannot connect as " + served->system.username + "; retrying",
              {{"server", ns_ + "/" + name_}, {"error", c.status().message()}});
    return;
  }
  system_ = std::move(c).value();
}

void ServerSession::PlanMembers() {
  std::vector<std::string> seeds = pubsub::SplitUrls(served()->urls);
  std::vector<std::string> discovered;
  if (system_) discovered = system_->DiscoveredServers();
  std::vector<MemberState> states;
  {
    std::lock_guard lock(mu_);
    for (const auto& [url, m] : members_) {
      const bool connected = m->client && m->client->State() == ConnectionState::kConnected;
      m->server_id = connected ? m->client->ConnectedServerId() : "";
      states.push_back(
          {.url = url, .server_id = m->server_id, .unwanted_since = m->unwanted_since});
    }
  }
  MemberPlan plan = authorizer::PlanMembers(seeds, discovered, states, aliases_, options_.clock(),
                                            options_.forget_server_after);
  aliases_ = std::move(plan.aliases);
  for (const auto& url : plan.remove) RemoveMember(url);
  std::lock_guard lock(mu_);
  for (const auto& [url, since] : plan.unwanted_since) {
    if (auto it = members_.find(url); it != members_.end()) it->second->unwanted_since = since;
  }
  for (const auto& url : plan.add) {
    auto m = std::make_unique<Member>();
    m->url = url;
    members_.emplace(url, std::move(m));
  }
}

void ServerSession::RemoveMember(const std::string& url) {
  std::unique_ptr<Member> m;
  {
    std::lock_guard lock(mu_);
    auto it = members_.find(url);
    if (it == members_.end()) return;
    m = std::move(it->second);
    members_.erase(it);
  }
  log::Info(kLogger, "closing the connection to a server this replica no longer serves",
            {{"server", ns_ + "/" + name_}, {"url", url}, {"nats_server_id", m->server_id}});
  m->sub.reset();  // before the client: its handler holds the client weakly
  m->client.reset();
}

void ServerSession::EnsureSubscribed(const std::string& url) {
  std::shared_ptr<pubsub::NatsClient> client;
  {
    std::lock_guard lock(mu_);
    auto it = members_.find(url);
    if (it == members_.end()) return;
    Member& m = *it->second;
    if (m.client && m.sub && m.client->State() != ConnectionState::kClosed) return;
    if (std::chrono::steady_clock::now() < m.next_connect) return;
    client = m.client;
  }
  if (client && client->State() == ConnectionState::kClosed) {
    log::Warn(kLogger, "authorizer connection closed for good; connecting again",
              {{"server", ns_ + "/" + name_}, {"url", url}});
    std::unique_ptr<pubsub::Subscription> sub;
    {
      std::lock_guard lock(mu_);
      Member& m = *members_.at(url);
      sub = std::move(m.sub);
      m.client.reset();
    }
    sub.reset();  // before the client: its handler holds the client weakly
    client.reset();
  }
  auto failed = [&](std::string error, bool tls) {
    std::lock_guard lock(mu_);
    health_.attempted = true;
    Member& m = *members_.at(url);
    m.error = std::move(error);
    m.tls_failed = tls;
    m.next_connect = std::chrono::steady_clock::now() + options_.reconnect_wait;
  };
  if (!client) {
    std::shared_ptr<const OperatorMode> login;
    auto connected =
        ConnectAs(served()->authorizer, std::string(api::kAuthorizerUsername), url, login);
    if (!connected.ok()) {
      log::Warn(
          kLogger, "cannot connect to NATS; retrying",
          {{"server", ns_ + "/" + name_}, {"url", url}, {"error", connected.status().message()}});
      failed("connect: " + connected.status().message(),
             IsTlsFailure(connected.status().message()));
      return;
    }
    client = std::shared_ptr<pubsub::NatsClient>(std::move(connected).value());
    const bool other = login != served()->operator_mode;
    if (other) {
      log::Info(kLogger,
                "the server runs the other isolation's config (not restarted since a switch); "
                "logged in and answering in that isolation until it restarts",
                {{"server", ns_ + "/" + name_},
                 {"url", url},
                 {"isolation", login ? "Accounts" : "Permissions"}});
    }
    std::lock_guard lock(mu_);
    health_.attempted = true;
    Member& m = *members_.at(url);
    m.client = client;
    m.login = std::move(login);
    m.other_isolation = other;
  }
  std::weak_ptr<pubsub::NatsClient> weak = client;
  std::shared_ptr<const OperatorMode> login;
  {
    std::lock_guard lock(mu_);
    login = members_.at(url)->login;
  }
  auto sub = client->Subscribe(std::string(api::kAuthCalloutSubject),
                               std::string(api::kAuthorizerQueueGroup),
                               [this, weak, login](const pubsub::RawMessage& m) {
                                 if (m.reply.empty())
                                   return;  // not a callout request: nothing to answer
                                 Request r{.client = weak.lock(),
                                           .login = login,
                                           .reply = std::string(m.reply),
                                           .data = std::string(m.data),
                                           .received = std::chrono::steady_clock::now()};
                                 if (!r.client) return;
                                 {
                                   std::lock_guard lock(qmu_);
                                   if (queue_.size() >= options_.max_queued_requests) {
                                     if (metrics_)
                                       metrics_->ObserveDecision("dropped", "QueueFull", 0);
                                     return;
                                   }
                                   queue_.push_back(std::move(r));
                                 }
                                 qcv_.notify_one();
                               });
  if (!sub.ok()) {
    log::Warn(kLogger, "cannot subscribe to the auth callout subject; retrying",
              {{"server", ns_ + "/" + name_}, {"url", url}, {"error", sub.status().message()}});
    failed("subscribe: " + sub.status().message(), false);
    return;
  }
  const std::string id = client->ConnectedServerId();
  log::Info(kLogger, "subscribed; answering auth callout requests",
            {{"server", ns_ + "/" + name_}, {"url", url}, {"nats_server_id", id}});
  std::lock_guard lock(mu_);
  Member& m = *members_.at(url);
  m.sub = std::move(sub).value();
  m.server_id = id;
  m.error.clear();
  m.tls_failed = false;
}

void ServerSession::Work() {
  while (true) {
    Request r;
    {
      std::unique_lock lock(qmu_);
      qcv_.wait(lock, [&] { return draining_ || !queue_.empty(); });
      if (queue_.empty()) return;  // draining and nothing left
      r = std::move(queue_.front());
      queue_.pop_front();
    }
    Answer(r);
  }
}

void ServerSession::Answer(const Request& r) {
  auto served = this->served();
  // In the isolation of the login the request came on: the one its server
  // runs.
  const ConfigModeSigner config_mode(*served->issuer);
  const UserJwtSigner& signer =
      r.login ? static_cast<const UserJwtSigner&>(r.login->signer) : config_mode;
  authorizer::Answer a = AnswerRequest(r.data, *served->directory, *served->issuer, signer,
                                       options_.clock(), options_.credential_deps);
  if (!a.reply.empty()) {
    if (Status s = r.client->Publish(r.reply, a.reply); !s.ok()) {
      log::Warn(kLogger, "cannot send the authorization response",
                {{"server", ns_ + "/" + name_}, {"user", a.user}, {"error", s.message()}});
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - r.received).count();
  if (metrics_) metrics_->ObserveDecision(a.result, a.reason, seconds);
  if (a.result == kResultAllowed) {
    log::Debug(kLogger, "allowed", {{"server", ns_ + "/" + name_}, {"user", a.user}});
  } else {
    log::Info(kLogger, a.result == kResultDenied ? "denied" : "invalid request",
              {{"server", ns_ + "/" + name_},
               {"user", a.user},
               {"reason", a.reason},
               {"message", a.message}});
  }
}

Status ServerSession::Sweep() {
  auto served = this->served();
  // Operator mode: the installations' connections are in their own
  // accounts, so every account's connections are listed (the system user
  // sees them all) and judged by account.
  // The isolation of the servers the system user reached (during a roll,
  // perhaps the old one): the connections it lists are judged by it.
  const std::shared_ptr<const OperatorMode> mode = system_login_;
  const std::string account = mode ? std::string() : served->account;
  auto replies =
      system_->RequestAll(PingConnzSubject(), ConnzRequest(account, 0), options_.gather_wait);
  if (!replies.ok()) return replies.status().Annotate("CONNZ");
  if (replies->empty()) return Status::Unavailable("no server answered " + PingConnzSubject());
  std::vector<logic::LiveConnection> live;
  for (const auto& body : *replies) {
    auto page = ParseConnzReply(body);
    if (!page.ok()) return page.status();
    const std::string id = page->server_id;
    int64_t offset = page->offset;
    while (true) {
      const size_t got = page->connections.size();
      for (auto& c : page->connections) live.push_back(std::move(c));
      offset += static_cast<int64_t>(got);
      if (got == 0 || offset >= page->total) break;
      auto next =
          system_->Request(ServerConnzSubject(id), ConnzRequest(account, static_cast<int>(offset)),
                           options_.connect_timeout);
      if (!next.ok()) return next.status().Annotate("CONNZ of " + id);
      page = ParseConnzReply(*next);
      if (!page.ok()) return page.status();
    }
  }
  const logic::Time now = options_.clock();
  std::vector<logic::LiveConnection> close;
  if (mode) {
    if (account_keys_of_ != mode) {
      account_keys_.clear();
      account_keys_of_ = mode;
    }
    std::map<std::string, std::string> accounts;  // account key -> user name
    for (const auto& [user, entry] : served->directory->by_user) {
      const std::string installation = entry.ns() + "/" + entry.name();
      auto known = account_keys_.find(installation);
      if (known == account_keys_.end()) {
        auto key = logic::InstallationAccountKey(mode->keys.installation_signing, entry.ns(),
                                                 entry.name());
        if (!key.ok()) continue;
        known = account_keys_.emplace(installation, key->public_key()).first;
      }
      accounts.emplace(known->second, user);
    }
    close = logic::ConnectionsToCloseByAccount(*served->directory, accounts, live, now);
  } else {
    close = logic::ConnectionsToClose(*served->directory, live, now);
  }
  std::map<std::pair<std::string, uint64_t>, logic::Time> suspects;
  std::vector<logic::LiveConnection> kick;
  for (auto& c : close) {
    auto key = std::make_pair(c.server_id, c.cid);
    auto it = suspects_.find(key);
    logic::Time since = it != suspects_.end() ? it->second : now;
    if (now - since >= options_.kick_after) {
      kick.push_back(std::move(c));
    } else {
      suspects.emplace(key, since);
    }
  }
  suspects_ = std::move(suspects);
  int closed = 0;
  Status first_error;
  for (const auto& c : kick) {
    auto reply =
        system_->Request(KickSubject(c.server_id), KickRequest(c.cid), options_.connect_timeout);
    Status s = reply.ok() ? ParseKickReply(*reply) : reply.status();
    if (s.ok()) {
      ++closed;
      log::Info(kLogger, "closed a connection that is no longer accepted",
                {{"server", ns_ + "/" + name_},
                 {"nats_server_id", c.server_id},
                 {"cid", c.cid},
                 {"user", c.name}});
    } else if (s.code() != StatusCode::kNotFound && first_error.ok()) {
      first_error = s.Annotate("KICK " + std::to_string(c.cid) + " on " + c.server_id);
    }
  }
  if (closed > 0 && metrics_) metrics_->AddKicks(ns_, name_, closed);
  std::lock_guard lock(mu_);
  kicks_ += closed;
  return first_error;
}

}  // namespace switchboard::authorizer
