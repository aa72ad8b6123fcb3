#include "switchboard/operator_controller/options.h"

#include "switchboard/common/flags.h"
#include "switchboard/common/service_main.h"

namespace switchboard::operator_controller {
namespace {

constexpr const char* kUsage = R"(Usage: switchboard-operator [flags]

Reconciles PubSubBackend and NatsServer objects (pubsub.switchboard.dev/v1alpha1).)";

// Every flag, bound to `o`: the one list both ParseOptions and Usage read.
void Register(flags::FlagSet* set, Options* o) {
  service::ClusterFlags(set, &o->kubeconfig, &o->namespaces);
  set->Bool("leader-elect", &o->leader_elect,
            "run leader election over a coordination.k8s.io/v1 Lease");
  set->String("lease-namespace", &o->lease_namespace,
              "namespace of the Lease; default $POD_NAMESPACE, else the\n"
              "kubeconfig's namespace (alias: --leader-election-namespace)")
      .Metavar("NS")
      .Alias("leader-election-namespace");  // controller-runtime's name
  set->String("lease-name", &o->lease_name, "name of the Lease (default switchboard-operator)")
      .Metavar("NAME");
  set->String("identity", &o->identity, "holder identity; default <hostname>_<pid>").Metavar("ID");
  set->Duration("lease-duration", &o->lease_duration,
                "how long a lease is valid without renewal (default 15s)");
  set->Duration("renew-deadline", &o->renew_deadline,
                "leader gives up leadership if it cannot renew for this long\n(default 10s)");
  set->Duration("retry-period", &o->retry_period,
                "how often to try to acquire or renew (default 2s)");
  service::EndpointFlags(set, &o->health_addr, &o->metrics_addr);
  set->Int("workers", &o->workers, "concurrent reconciles per kind (default 8)", 1, 256);
  set->Int("probe-workers", &o->probe_workers,
           "concurrent NATS probes, off the reconcile workers (default 8)", 1, 256);
  set->Duration("probe-timeout", &o->probe_timeout, "deadline of one NATS probe (default 5s)",
                Millis(1));
  set->Duration("probe-interval", &o->probe_interval,
                "re-probe Ready backends this often (default 5m)", Millis(1));
  set->Duration("resync-period", &o->resync_period,
                "re-queue every object this often; 0 = never (default 0)");
  set->String("field-manager", &o->field_manager,
              "field manager recorded for every write (default switchboard-operator)")
      .Metavar("NAME");
  set->LogLevel(&o->log_level);
}

}  // namespace

Result<Options> ParseOptions(const std::vector<std::string>& args) {
  auto parsed = flags::ParseInto<Options>(kUsage, args, Register);
  if (!parsed.ok() || parsed->help) return parsed;
  const Options& o = *parsed;
  if (o.lease_duration <= o.renew_deadline) {
    return Status::InvalidArgument(
        "--lease-duration must be greater than --renew-deadline (a leader must give up before "
        "its lease can be taken)");
  }
  if (o.renew_deadline <= o.retry_period) {
    return Status::InvalidArgument("--renew-deadline must be greater than --retry-period");
  }
  return parsed;
}

std::string Usage() { return flags::HelpFor<Options>(kUsage, Register); }

}  // namespace switchboard::operator_controller
