#include "switchboard/operator_controller/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "switchboard/operator_controller/options.h"

namespace switchboard::operator_controller {

struct Metrics::Families {
  prometheus::Family<prometheus::Counter>* reconciles;
  prometheus::Family<prometheus::Histogram>* duration;
  prometheus::Family<prometheus::Gauge>* depth;
  prometheus::Family<prometheus::Counter>* probes;
  prometheus::Gauge* leader;
  prometheus::Family<prometheus::Gauge>* authorizers;
  prometheus::Family<prometheus::Gauge>* servers;
  prometheus::Family<prometheus::Gauge>* backends;
  prometheus::Family<prometheus::Gauge>* config_bytes;
  prometheus::Family<prometheus::Gauge>* config_max_bytes;
};

Metrics::Metrics() : registry_(std::make_shared<prometheus::Registry>()), f_(new Families) {
  f_->reconciles = &prometheus::BuildCounter()
                        .Name("switchboard_reconcile_total")
                        .Help("Reconciles by kind and result (success, requeue, error, invalid)")
                        .Register(*registry_);
  f_->duration = &prometheus::BuildHistogram()
                      .Name("switchboard_reconcile_duration_seconds")
                      .Help("Duration of one reconcile, by kind")
                      .Register(*registry_);
  f_->depth = &prometheus::BuildGauge()
                   .Name("switchboard_workqueue_depth")
                   .Help("Keys waiting in the work queue, by kind")
                   .Register(*registry_);
  f_->probes = &prometheus::BuildCounter()
                    .Name("switchboard_probe_total")
                    .Help("NATS probes with an installation's credentials, by result")
                    .Register(*registry_);
  f_->leader = &prometheus::BuildGauge()
                    .Name("switchboard_leader")
                    .Help("1 while this replica holds the leader lease")
                    .Register(*registry_)
                    .Add({});
  f_->authorizers = &prometheus::BuildGauge()
                         .Name("switchboard_natsserver_authorizers")
                         .Help(
                             "AuthCallout mode: NATS servers (of those that answered) with an "
                             "authorizer subscribed on $SYS.REQ.USER.AUTH, by NatsServer")
                         .Register(*registry_);
  f_->servers = &prometheus::BuildGauge()
                     .Name("switchboard_natsserver_servers")
                     .Help(
                         "AuthCallout mode: NATS servers that answered the system account's "
                         "ping, by NatsServer")
                     .Register(*registry_);
  f_->backends = &prometheus::BuildGauge()
                      .Name("switchboard_pubsubbackends")
                      .Help("PubSubBackends by their stored Ready status and reason")
                      .Register(*registry_);
  f_->config_bytes =
      &prometheus::BuildGauge()
           .Name("switchboard_natsserver_config_bytes")
           .Help("IncludeFile mode: bytes of the rendered include file, by NatsServer")
           .Register(*registry_);
  f_->config_max_bytes =
      &prometheus::BuildGauge()
           .Name("switchboard_natsserver_config_max_bytes")
           .Help("IncludeFile mode: the include file's size ceiling (its Secret's), by NatsServer")
           .Register(*registry_);
}

Metrics::~Metrics() = default;

void Metrics::ObserveReconcile(const std::string& kind, const std::string& result, double seconds) {
  f_->reconciles->Add({{"kind", kind}, {"result", result}}).Increment();
  static const prometheus::Histogram::BucketBoundaries kBuckets = {
      0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
  f_->duration->Add({{"kind", kind}}, kBuckets).Observe(seconds);
}

void Metrics::SetQueueDepth(const std::string& kind, double depth) {
  f_->depth->Add({{"kind", kind}}).Set(depth);
}

void Metrics::ObserveProbe(const std::string& result) {
  f_->probes->Add({{"result", result}}).Increment();
}

void Metrics::SetLeader(bool leader) { f_->leader->Set(leader ? 1 : 0); }

void Metrics::SetAuthorizers(const std::string& ns, const std::string& name, int authorizers,
                             int servers) {
  f_->authorizers->Add({{"namespace", ns}, {"name", name}}).Set(authorizers);
  f_->servers->Add({{"namespace", ns}, {"name", name}}).Set(servers);
}

void Metrics::ForgetAuthorizers(const std::string& ns, const std::string& name) {
  const std::map<std::string, std::string> labels = {{"namespace", ns}, {"name", name}};
  for (auto* family : {f_->authorizers, f_->servers}) {
    if (family->Has(labels)) family->Remove(&family->Add(labels));
  }
}

void Metrics::SetBackends(const std::string& ready, const std::string& reason, int count) {
  f_->backends->Add({{"ready", ready}, {"reason", reason}}).Set(count);
}

void Metrics::SetConfigBytes(const std::string& ns, const std::string& name, size_t bytes,
                             size_t max_bytes) {
  f_->config_bytes->Add({{"namespace", ns}, {"name", name}}).Set(static_cast<double>(bytes));
  f_->config_max_bytes->Add({{"namespace", ns}, {"name", name}})
      .Set(static_cast<double>(max_bytes));
}

void Metrics::ForgetConfigBytes(const std::string& ns, const std::string& name) {
  const std::map<std::string, std::string> labels = {{"namespace", ns}, {"name", name}};
  for (auto* family : {f_->config_bytes, f_->config_max_bytes}) {
    if (family->Has(labels)) family->Remove(&family->Add(labels));
  }
}

Status Metrics::Serve(const std::string& addr) {
  auto hp = ParseHostPort(addr);
  if (!hp.ok()) return hp.status();
  if (hp->port < 0) return Status::Ok();
  auto server =
      kube::EndpointsServer::Start({.host = hp->host, .port = hp->port, .metrics = registry_});
  if (!server.ok()) return server.status().Annotate("metrics");
  server_ = std::move(server).value();
  return Status::Ok();
}

std::string Metrics::Text() const { return kube::MetricsText(*registry_); }

}  // namespace switchboard::operator_controller
