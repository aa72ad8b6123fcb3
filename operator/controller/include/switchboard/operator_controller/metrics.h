// The operator's Prometheus metrics (prometheus-cpp). One Metrics object per
// process; every method is thread-safe (prometheus-cpp metrics are atomic).
//
//   switchboard_reconcile_total{kind,result}            counter
//     result: success | requeue | error | invalid
//   switchboard_reconcile_duration_seconds{kind}        histogram
//   switchboard_workqueue_depth{kind}                   gauge
//   switchboard_probe_total{result}                     counter
//     result: Probed or the Ready=False reason (ServerUnreachable, AuthFailed, ...)
//   switchboard_leader                                  gauge, 1 while this replica leads
//   switchboard_natsserver_authorizers{namespace,name}  gauge, AuthCallout mode: NATS
//     servers (of those that answered) with an authorizer subscribed
//   switchboard_natsserver_servers{namespace,name}      gauge, AuthCallout mode: NATS
//     servers that answered the system account's ping
//   (below _servers, some server has no authorizer: alert on the difference)
//   switchboard_pubsubbackends{ready,reason}            gauge, PubSubBackends by their
//     stored Ready status and reason (the leader's cache; no per-installation label)
//   switchboard_natsserver_config_bytes{namespace,name}      gauge, IncludeFile mode: size
//     of the rendered include file
//   switchboard_natsserver_config_max_bytes{namespace,name}  gauge, IncludeFile mode: its
//     ceiling (the Secret's 1 MiB)
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "switchboard/common/status.h"
#include "switchboard/kube/endpoints_server.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace switchboard::operator_controller {

class Metrics {
 public:
  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  void ObserveReconcile(const std::string& kind, const std::string& result, double seconds);
  void SetQueueDepth(const std::string& kind, double depth);
  void ObserveProbe(const std::string& result);
  void SetLeader(bool leader);
  // AuthCallout mode's counts of NatsServer ns/name; Forget drops its
  // series (the server is gone or back in IncludeFile mode).
  void SetAuthorizers(const std::string& ns, const std::string& name, int authorizers, int servers);
  void ForgetAuthorizers(const std::string& ns, const std::string& name);
  // How many PubSubBackends stand at Ready=`ready` with `reason` now.
  void SetBackends(const std::string& ready, const std::string& reason, int count);
  // IncludeFile mode: the include file of NatsServer ns/name as last
  // written (or found unchanged), and its ceiling; Forget drops both (the
  // server is gone or in AuthCallout mode).
  void SetConfigBytes(const std::string& ns, const std::string& name, size_t bytes,
                      size_t max_bytes);
  void ForgetConfigBytes(const std::string& ns, const std::string& name);

  // Starts serving /metrics on `addr` (host:port, :port; see ParseHostPort)
  // with kube::EndpointsServer, as the webhook serves its own. A disabled
  // address ("0") is OK and serves nothing.
  Status Serve(const std::string& addr);

  // The text exposition of every metric (what /metrics returns); for tests.
  std::string Text() const;

  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

 private:
  struct Families;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<Families> f_;
  std::unique_ptr<kube::EndpointsServer> server_;
};

}  // namespace switchboard::operator_controller
