#include "switchboard/operator_controller/options.h"

#include "switchboard/common/flags.h"

namespace switchboard::operator_controller {
namespace {

constexpr const char* kUsage = R"(Usage: switchboard-operator [flags]

Reconciles PubSubBackend and NatsServer objects (pubsub.switchboard.dev/v1alpha1).)";

// Every flag, bound to `o`: the one list both ParseOptions and Usage read.
void Register(flags::FlagSet* set, Options* o) {
  set->String("kubeconfig", &o->kubeconfig,
              "kubeconfig file; default $KUBECONFIG, else in-cluster config")
      .Metavar("PATH");
  set->Value("namespaces", "a,b", "namespaces to watch; empty (default) = all namespaces",
             [o](std::string_view v) {
               o->namespaces = flags::SplitList(v);
               return Status::Ok();
             });
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
  auto addr = [](std::string* out) {
    return [out](std::string_view v) {
      auto hp = ParseHostPort(v);
      if (hp.ok()) *out = std::string(v);
      return hp.status();
    };
  };
  set->Value("health-addr", "ADDR", "/healthz and /readyz, plain HTTP (default :8081; 0 disables)",
             addr(&o->health_addr));
  set->Value("metrics-addr", "ADDR", "Prometheus /metrics (default :8080; 0 disables)",
             addr(&o->metrics_addr));
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
  Options o;
  flags::FlagSet set(kUsage);
  Register(&set, &o);
  SB_RETURN_IF_ERROR(set.Parse(args));
  if (set.help()) {
    o.help = true;
    return o;
  }
  if (o.lease_duration <= o.renew_deadline) {
    return Status::InvalidArgument(
        "--lease-duration must be greater than --renew-deadline (a leader must give up before "
        "its lease can be taken)");
  }
  if (o.renew_deadline <= o.retry_period) {
    return Status::InvalidArgument("--renew-deadline must be greater than --retry-period");
  }
  return o;
}

std::string Usage() {
  Options o;
  flags::FlagSet set(kUsage);
  Register(&set, &o);
  return set.Help() + "Addresses: host:port or :port.\n";
}

}  // namespace switchboard::operator_controller
