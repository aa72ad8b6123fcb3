#include "switchboard/authorizer/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <string>

namespace switchboard::authorizer {

struct Metrics::Families {
  prometheus::Family<prometheus::Counter>* decisions;
  prometheus::Family<prometheus::Histogram>* latency;
  prometheus::Family<prometheus::Gauge>* subscribed;
  prometheus::Family<prometheus::Gauge>* servers;
  prometheus::Family<prometheus::Gauge>* other_isolation;
  prometheus::Family<prometheus::Counter>* kicks;
  prometheus::Family<prometheus::Counter>* sweeps;
  prometheus::Family<prometheus::Histogram>* rebuilds;
};

Metrics::Metrics(std::shared_ptr<prometheus::Registry> registry)
    : registry_(std::move(registry)), f_(std::make_unique<Families>()) {
  f_->decisions = &prometheus::BuildCounter()
                       .Name("switchboard_authorizer_decisions_total")
                       .Help("Auth callout requests answered, by result and reason")
                       .Register(*registry_);
  f_->latency = &prometheus::BuildHistogram()
                     .Name("switchboard_authorizer_decision_duration_seconds")
                     .Help("From an auth callout request's arrival to its reply")
                     .Register(*registry_);
  f_->subscribed = &prometheus::BuildGauge()
                        .Name("switchboard_authorizer_subscribed")
                        .Help(
                            "1 while subscribed on $SYS.REQ.USER.AUTH of that NatsServer (on every "
                            "server it is connected to)")
                        .Register(*registry_);
  f_->servers = &prometheus::BuildGauge()
                     .Name("switchboard_authorizer_subscribed_servers")
                     .Help(
                         "NATS servers of that NatsServer's cluster this replica is subscribed on, "
                         "each through its own connection")
                     .Register(*registry_);
  f_->other_isolation =
      &prometheus::BuildGauge()
           .Name("switchboard_authorizer_other_isolation_servers")
           .Help(
               "Of those servers, the ones this replica logged in to with the other isolation's "
               "login: not restarted since the NatsServer's isolation was switched")
           .Register(*registry_);
  f_->kicks = &prometheus::BuildCounter()
                   .Name("switchboard_authorizer_kicks_total")
                   .Help("Connections closed because their user or password is no longer accepted")
                   .Register(*registry_);
  f_->sweeps = &prometheus::BuildCounter()
                    .Name("switchboard_authorizer_sweeps_total")
                    .Help("Sweeps over a NatsServer's connections, by result")
                    .Register(*registry_);
  f_->rebuilds = &prometheus::BuildHistogram()
                      .Name("switchboard_authorizer_rebuild_duration_seconds")
                      .Help("Rebuilds of what is served from the caches, by how long they took")
                      .Register(*registry_);
}

Metrics::~Metrics() = default;

void Metrics::ObserveDecision(std::string_view result, std::string_view reason, double seconds) {
  f_->decisions->Add({{"result", std::string(result)}, {"reason", std::string(reason)}})
      .Increment();
  // From well under a millisecond (a constant-time compare) to the
  // server's callout timeout (5 s).
  static const prometheus::Histogram::BucketBoundaries kBuckets = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5};
  f_->latency->Add({}, kBuckets).Observe(seconds);
}

void Metrics::SetSubscribed(std::string_view ns, std::string_view name, bool subscribed) {
  f_->subscribed->Add({{"namespace", std::string(ns)}, {"name", std::string(name)}})
      .Set(subscribed ? 1 : 0);
}

void Metrics::SetSubscribedServers(std::string_view ns, std::string_view name, int servers) {
  f_->servers->Add({{"namespace", std::string(ns)}, {"name", std::string(name)}}).Set(servers);
}

void Metrics::SetOtherIsolationServers(std::string_view ns, std::string_view name, int servers) {
  f_->other_isolation->Add({{"namespace", std::string(ns)}, {"name", std::string(name)}})
      .Set(servers);
}

void Metrics::StartServer(std::string_view ns, std::string_view name) {
  const prometheus::Labels labels{{"namespace", std::string(ns)}, {"name", std::string(name)}};
  f_->subscribed->Add(labels).Set(0);
  f_->kicks->Add(labels);
}

void Metrics::ForgetServer(std::string_view ns, std::string_view name) {
  const prometheus::Labels labels{{"namespace", std::string(ns)}, {"name", std::string(name)}};
  f_->subscribed->Remove(&f_->subscribed->Add(labels));
  f_->servers->Remove(&f_->servers->Add(labels));
  f_->other_isolation->Remove(&f_->other_isolation->Add(labels));
  f_->kicks->Remove(&f_->kicks->Add(labels));
}

void Metrics::AddKicks(std::string_view ns, std::string_view name, double n) {
  f_->kicks->Add({{"namespace", std::string(ns)}, {"name", std::string(name)}}).Increment(n);
}

void Metrics::ObserveSweep(std::string_view ns, std::string_view name, bool ok) {
  f_->sweeps
      ->Add({{"namespace", std::string(ns)},
             {"name", std::string(name)},
             {"result", ok ? "ok" : "error"}})
      .Increment();
}

void Metrics::ObserveRebuild(double seconds) {
  // From a few installations (microseconds) to tens of thousands (a second).
  static const prometheus::Histogram::BucketBoundaries kBuckets = {
      0.0001, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
  f_->rebuilds->Add({}, kBuckets).Observe(seconds);
}

}  // namespace switchboard::authorizer
