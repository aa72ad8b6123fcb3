#include "usage_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <set>

namespace switchboard::operator_controller {
namespace logic = ::switchboard::operator_logic;

namespace {

std::pair<std::string, std::string> Split(const std::string& key) {
  const auto slash = key.find('/');
  if (slash == std::string::npos) return {"", key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

constexpr int kGauges = 3;    // connections, subscriptions, max per connection
constexpr int kCounters = 5;  // msgs in/out, bytes in/out, slow consumers

}  // namespace

struct UsageMetrics::Impl {
  std::array<prometheus::Family<prometheus::Gauge>*, kGauges> gauges{};
  std::array<prometheus::Family<prometheus::Counter>*, kCounters> counters{};
  prometheus::Family<prometheus::Gauge>* limit = nullptr;
  prometheus::Family<prometheus::Gauge>* collection = nullptr;
  prometheus::Family<prometheus::Counter>* errors = nullptr;

  struct Series {
    std::array<prometheus::Gauge*, kGauges> gauges{};
    std::array<prometheus::Counter*, kCounters> counters{};
  };
  struct Limit {
    std::array<prometheus::Gauge*, 3> gauges{};  // connections, subscriptions, payload
  };
  struct Server {
    std::map<std::string, Series> series;  // by installation "<ns>/<name>"
    // What each NATS server's figures of an installation were at the last
    // export: a counter grows by the sum of the servers' increments, so one
    // server's reset takes nothing from the others. Kept while the
    // installation has figures on any server, so a server that comes back
    // adds only what is new.
    std::map<logic::UsageKey, std::array<int64_t, kCounters>> last;
    std::map<std::string, Limit> limits;
  };
  std::map<std::string, Server> servers;

  void Remove(Series& s) {
    for (int i = 0; i < kGauges; ++i) gauges[i]->Remove(s.gauges[i]);
    for (int i = 0; i < kCounters; ++i) counters[i]->Remove(s.counters[i]);
  }
  void Remove(Limit& l) {
    for (auto* g : l.gauges) {
      if (g != nullptr) limit->Remove(g);
    }
  }
};

UsageMetrics::UsageMetrics(prometheus::Registry& r) : impl_(new Impl) {
  // Each name written out in a Build...().Name("...") call: the
  // observability checks read the exported names from the source.
  impl_->gauges = {&prometheus::BuildGauge()
                        .Name("switchboard_installation_connections")
                        .Help("Open connections of an installation's users, on every NATS server "
                              "of its NatsServer")
                        .Register(r),
                   &prometheus::BuildGauge()
                        .Name("switchboard_installation_subscriptions")
                        .Help("Subscriptions of an installation's connections, on every NATS "
                              "server of its NatsServer")
                        .Register(r),
                   &prometheus::BuildGauge()
                        .Name("switchboard_installation_subscriptions_per_connection_max")
                        .Help("The most subscriptions one connection of the installation holds")
                        .Register(r)};
  impl_->counters = {
      &prometheus::BuildCounter()
           .Name("switchboard_installation_messages_in_total")
           .Help("Messages an installation's clients published")
           .Register(r),
      &prometheus::BuildCounter()
           .Name("switchboard_installation_messages_out_total")
           .Help("Messages NATS delivered to an installation's clients")
           .Register(r),
      &prometheus::BuildCounter()
           .Name("switchboard_installation_bytes_in_total")
           .Help("Payload bytes an installation's clients published")
           .Register(r),
      &prometheus::BuildCounter()
           .Name("switchboard_installation_bytes_out_total")
           .Help("Payload bytes NATS delivered to an installation's clients")
           .Register(r),
      &prometheus::BuildCounter()
           .Name("switchboard_installation_slow_consumers_total")
           .Help("Times NATS cut an installation's connection off as a slow consumer")
           .Register(r)};
  impl_->limit = &prometheus::BuildGauge()
                      .Name("switchboard_installation_limit")
                      .Help(
                          "A limit NATS enforces for an installation's account: connections "
                          "(across the cluster), subscriptions (per connection), payload")
                      .Register(r);
  impl_->collection = &prometheus::BuildGauge()
                           .Name("switchboard_usage_collection_seconds")
                           .Help("How long the last usage collection of a NatsServer took")
                           .Register(r);
  impl_->errors = &prometheus::BuildCounter()
                       .Name("switchboard_usage_collection_errors_total")
                       .Help("Usage collections of a NatsServer that no NATS server answered")
                       .Register(r);
}

UsageMetrics::~UsageMetrics() = default;

void UsageMetrics::Export(
    const std::string& server_key, const std::map<logic::UsageKey, logic::ServerUsage>& usage,
    const std::map<std::string, logic::InstallationLimits, std::less<>>& limits) {
  Impl& m = *impl_;
  Impl::Server& srv = m.servers[server_key];
  // One series set per installation: its NATS servers' figures summed (the
  // most subscriptions of one connection: the largest), so the scrape grows
  // with installations, not with installations times servers.
  struct Sum {
    int64_t connections = 0, subscriptions = 0, max_per_connection = 0;
    std::array<int64_t, kCounters> add{};
  };
  std::map<std::string, Sum> sums;
  for (const auto& [key, u] : usage) {
    Sum& sum = sums[key.first];
    sum.connections += u.connections;
    sum.subscriptions += u.subscriptions;
    sum.max_per_connection = std::max(sum.max_per_connection, u.max_subscriptions_per_connection);
    const std::array<int64_t, kCounters> now = {u.traffic.msgs_in, u.traffic.msgs_out,
                                                u.traffic.bytes_in, u.traffic.bytes_out,
                                                u.slow_consumers};
    std::array<int64_t, kCounters>& last = srv.last[key];
    for (int i = 0; i < kCounters; ++i) {
      sum.add[i] += logic::CounterIncrement(last[i], now[i]);
      last[i] = now[i];
    }
  }
  for (auto it = srv.last.begin(); it != srv.last.end();) {
    it = sums.count(it->first.first) ? std::next(it) : srv.last.erase(it);
  }
  for (auto it = srv.series.begin(); it != srv.series.end();) {
    if (sums.count(it->first)) {
      ++it;
    } else {
      m.Remove(it->second);
      it = srv.series.erase(it);
    }
  }
  for (const auto& [inst, sum] : sums) {
    auto [it, added] = srv.series.try_emplace(inst);
    Impl::Series& s = it->second;
    if (added) {
      auto [ns, name] = Split(inst);
      const std::map<std::string, std::string> labels = {{"namespace", ns}, {"name", name}};
      for (int i = 0; i < kGauges; ++i) s.gauges[i] = &m.gauges[i]->Add(labels);
      for (int i = 0; i < kCounters; ++i) s.counters[i] = &m.counters[i]->Add(labels);
    }
    s.gauges[0]->Set(static_cast<double>(sum.connections));
    s.gauges[1]->Set(static_cast<double>(sum.subscriptions));
    s.gauges[2]->Set(static_cast<double>(sum.max_per_connection));
    for (int i = 0; i < kCounters; ++i) {
      if (sum.add[i] > 0) s.counters[i]->Increment(static_cast<double>(sum.add[i]));
    }
  }
  for (auto it = srv.limits.begin(); it != srv.limits.end();) {
    if (limits.count(it->first)) {
      ++it;
    } else {
      m.Remove(it->second);
      it = srv.limits.erase(it);
    }
  }
  for (const auto& [inst, l] : limits) {
    Impl::Limit& g = srv.limits[inst];
    auto [ns, name] = Split(inst);
    const std::array<std::pair<const char*, std::optional<int64_t>>, 3> values = {
        {{"connections", l.max_connections},
         {"subscriptions", l.max_subscriptions},
         {"payload", l.max_payload}}};
    for (size_t i = 0; i < values.size(); ++i) {
      if (!values[i].second) {
        if (g.gauges[i] != nullptr) m.limit->Remove(g.gauges[i]);
        g.gauges[i] = nullptr;
        continue;
      }
      if (g.gauges[i] == nullptr) {
        g.gauges[i] =
            &m.limit->Add({{"namespace", ns}, {"name", name}, {"limit", values[i].first}});
      }
      g.gauges[i]->Set(static_cast<double>(*values[i].second));
    }
  }
}

void UsageMetrics::ObserveCollection(const std::string& server_key, double seconds, bool ok) {
  auto [ns, name] = Split(server_key);
  impl_->collection->Add({{"namespace", ns}, {"name", name}}).Set(seconds);
  auto& errors = impl_->errors->Add({{"namespace", ns}, {"name", name}});
  if (!ok) errors.Increment();
}

void UsageMetrics::Forget(const std::string& server_key) {
  Impl& m = *impl_;
  auto it = m.servers.find(server_key);
  if (it != m.servers.end()) {
    for (auto& [k, s] : it->second.series) m.Remove(s);
    for (auto& [k, l] : it->second.limits) m.Remove(l);
    m.servers.erase(it);
  }
  auto [ns, name] = Split(server_key);
  const std::map<std::string, std::string> labels = {{"namespace", ns}, {"name", name}};
  if (m.collection->Has(labels)) m.collection->Remove(&m.collection->Add(labels));
  if (m.errors->Has(labels)) m.errors->Remove(&m.errors->Add(labels));
}

}  // namespace switchboard::operator_controller
