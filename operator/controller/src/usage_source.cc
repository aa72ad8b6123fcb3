#include "usage_source.h"

#include <set>

namespace switchboard::operator_controller {
namespace logic = ::switchboard::operator_logic;

Result<std::unique_ptr<UsageSource>> UsageSource::Open(const pubsub::NatsOptions& options) {
  auto client = pubsub::NatsClient::Connect(options);
  if (!client.ok()) return client.status();
  std::unique_ptr<UsageSource> source(new UsageSource());
  source->client_ = std::move(client).value();
  UsageSource* self = source.get();
  auto sub = source->client_->Subscribe(std::string(logic::kDisconnectEventsSubject), "",
                                        [self](const pubsub::RawMessage& m) {
                                          auto closed = logic::ParseDisconnectEvent(m.data);
                                          if (!closed.ok()) return;
                                          std::lock_guard lock(self->mu_);
                                          self->events_.push_back(std::move(closed).value());
                                        });
  if (!sub.ok()) return sub.status();
  source->events_sub_ = std::move(sub).value();
  return source;
}

UsageSource::~UsageSource() {
  events_sub_.reset();
  client_.reset();
}

Result<logic::UsageRound> UsageSource::Collect(const std::string& account, bool statz,
                                               std::chrono::milliseconds window) {
  logic::UsageRound round;
  auto first = client_->RequestAll(std::string(logic::kPingConnzSubject),
                                   logic::UsageConnzRequest(account, 0), window);
  if (!first.ok()) return first.status();
  std::set<std::string> answered;
  Status last_error = Status::Unavailable("no NATS server answered the CONNZ ping");
  for (const std::string& body : *first) {
    auto page = logic::ParseUsageConnz(body);
    if (!page.ok()) {
      last_error = page.status();
      continue;
    }
    bool complete = true;
    const std::string subject = logic::ServerConnzSubject(page->server_id);
    for (int64_t offset : logic::RemainingConnzOffsets(*page)) {
      auto more = client_->Request(subject, logic::UsageConnzRequest(account, offset), window);
      auto next =
          more.ok() ? logic::ParseUsageConnz(*more) : Result<logic::UsageConnzPage>(more.status());
      if (!next.ok()) {
        last_error = next.status();
        complete = false;
        break;
      }
      for (auto& c : next->connections) page->connections.push_back(std::move(c));
    }
    if (!complete) continue;
    answered.insert(page->server_id);
    for (auto& c : page->connections) round.live.push_back(std::move(c));
  }
  if (answered.empty()) return last_error;
  round.answered.assign(answered.begin(), answered.end());
  if (statz) {
    auto replies = client_->RequestAll(std::string(logic::kPingAccountStatzSubject),
                                       logic::AccountStatzRequest(), window);
    if (replies.ok()) {
      for (const std::string& body : *replies) {
        auto stats = logic::ParseAccountStatz(body);
        if (!stats.ok()) continue;
        for (auto& s : *stats) round.stats.push_back(std::move(s));
      }
    }
  }
  std::lock_guard lock(mu_);
  round.closed.swap(events_);
  return round;
}

}  // namespace switchboard::operator_controller
