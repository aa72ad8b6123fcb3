// The per-installation usage series, on the operator's registry:
//
//   switchboard_installation_connections{namespace,name}            gauge
//   switchboard_installation_subscriptions{namespace,name}          gauge
//   switchboard_installation_subscriptions_per_connection_max{namespace,name}  gauge
//   switchboard_installation_messages_in_total{namespace,name}      counter
//   switchboard_installation_messages_out_total{namespace,name}     counter
//   switchboard_installation_bytes_in_total{namespace,name}         counter
//   switchboard_installation_bytes_out_total{namespace,name}        counter
//   switchboard_installation_slow_consumers_total{namespace,name}   counter
//   switchboard_installation_limit{namespace,name,limit}                   gauge
//     limit: connections (across the cluster) | subscriptions (per connection) | payload
//   switchboard_usage_collection_seconds{namespace,name}                   gauge, the last
//     round of NatsServer namespace/name (how long the collection takes)
//   switchboard_usage_collection_errors_total{namespace,name}              counter
//
// `namespace`/`name` are the installation's (the PubSubBackend's) or, for
// the collection series, the NatsServer's. In = what the installation's
// clients published, out = what they were delivered. One series set per
// installation that has figures, summed over the NATS servers of its
// NatsServer (the scrape grows with installations, not with installations
// times servers); an installation that is gone loses its series.
//
// Thread-safety: one caller at a time (the collector's thread).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "switchboard/operator_logic/usage.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace switchboard::operator_controller {

class UsageMetrics {
 public:
  explicit UsageMetrics(prometheus::Registry& registry);
  ~UsageMetrics();

  // The figures of NatsServer `server_key` ("<ns>/<name>") now: its
  // series are set (counters grow by CounterIncrement), the series of this
  // server's installations that are not in `usage` or `limits` go.
  void Export(const std::string& server_key,
              const std::map<operator_logic::UsageKey, operator_logic::ServerUsage>& usage,
              const std::map<std::string, operator_logic::InstallationLimits, std::less<>>& limits);
  void ObserveCollection(const std::string& server_key, double seconds, bool ok);
  // Drops every series of NatsServer `server_key` (it is gone).
  void Forget(const std::string& server_key);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace switchboard::operator_controller
