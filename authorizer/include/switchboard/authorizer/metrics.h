// The authorizer's Prometheus metrics (served on --metrics-addr by
// kube::EndpointsServer). Labels never carry a user name or a secret.
#pragma once

#include <memory>
#include <string_view>

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace switchboard::authorizer {

class Metrics {
 public:
  explicit Metrics(std::shared_ptr<prometheus::Registry> registry);
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  const std::shared_ptr<prometheus::Registry>& registry() const { return registry_; }

  // switchboard_authorizer_decisions_total{result,reason} and
  // switchboard_authorizer_decision_duration_seconds (request received to
  // reply published).
  void ObserveDecision(std::string_view result, std::string_view reason, double seconds);
  // switchboard_authorizer_subscribed{namespace,name}: 1 while connected
  // to that NatsServer's cluster with the queue subscription on every
  // server connected to.
  void SetSubscribed(std::string_view ns, std::string_view name, bool subscribed);
  // switchboard_authorizer_subscribed_servers{namespace,name}: the distinct
  // NATS servers (server ids) this replica is subscribed on.
  void SetSubscribedServers(std::string_view ns, std::string_view name, int servers);
  // switchboard_authorizer_other_isolation_servers{namespace,name}: of
  // those, the servers this replica is logged in to with the other
  // isolation's login (LoginsOf): not restarted since a switch of
  // isolation, so still in the old walls.
  void SetOtherIsolationServers(std::string_view ns, std::string_view name, int servers);
  // A served server's series from its session's start: not subscribed, no
  // kick yet (a counter that exists at 0 lets increase() see the first).
  void StartServer(std::string_view ns, std::string_view name);
  void ForgetServer(std::string_view ns, std::string_view name);
  // switchboard_authorizer_kicks_total{namespace,name}: connections closed
  // by the sweep; switchboard_authorizer_sweeps_total{namespace,name,result}.
  void AddKicks(std::string_view ns, std::string_view name, double n);
  void ObserveSweep(std::string_view ns, std::string_view name, bool ok);
  // switchboard_authorizer_rebuild_duration_seconds: one rebuild of what is
  // served from the caches (its count: how many rebuilds).
  void ObserveRebuild(double seconds);

 private:
  struct Families;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<Families> f_;
};

}  // namespace switchboard::authorizer
