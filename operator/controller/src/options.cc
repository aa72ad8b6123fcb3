#include "switchboard/operator_controller/options.h"

#include <charconv>
#include <functional>
#include <map>
#include <optional>

#include "switchboard/api/duration.h"
#include "switchboard/common/log.h"

namespace switchboard::operator_controller {
namespace {

bool ParseInt(std::string_view text, long long* out) {
  if (text.empty()) return false;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && p == text.data() + text.size();
}

std::vector<std::string> SplitComma(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    std::string item(text.substr(start, end - start));
    while (!item.empty() && item.back() == ' ') item.pop_back();
    while (!item.empty() && item.front() == ' ') item.erase(0, 1);
    if (!item.empty()) out.push_back(item);
    start = end + 1;
  }
  return out;
}

Status ParseBool(std::string_view flag, std::string_view text, bool* out) {
  if (text == "true" || text == "1")
    *out = true;
  else if (text == "false" || text == "0")
    *out = false;
  else
    return Status::InvalidArgument("--" + std::string(flag) + ": \"" + std::string(text) +
                                   "\" is not a boolean; use true or false");
  return Status::Ok();
}

}  // namespace

Result<Millis> ParseDuration(std::string_view text) {
  // Go durations, through the project's one parser (api/duration.h).
  auto ns = api::ParseDuration(text);
  if (!ns.ok() || *ns < 0) {
    return Status::InvalidArgument("\"" + std::string(text) +
                                   "\" is not a duration; use e.g. 500ms, 5s, 10m, 1h or 1m30s");
  }
  return std::chrono::duration_cast<Millis>(std::chrono::nanoseconds(*ns));
}

Result<HostPort> ParseHostPort(std::string_view text) {
  if (text == "0" || text.empty()) return HostPort{};
  size_t colon = text.rfind(':');
  auto bad = [&] {
    return Status::InvalidArgument("\"" + std::string(text) +
                                   "\" is not an address; use host:port, :port, or 0 to disable");
  };
  if (colon == std::string_view::npos) return bad();
  long long port = 0;
  if (!ParseInt(text.substr(colon + 1), &port) || port < 0 || port > 65535) return bad();
  std::string host(text.substr(0, colon));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  return HostPort{host, static_cast<int>(port)};
}

Result<Options> ParseOptions(const std::vector<std::string>& args) {
  Options o;
  using Setter = std::function<Status(std::string_view)>;
  auto duration = [](std::string_view flag, Millis* out) -> Setter {
    return [flag, out](std::string_view v) -> Status {
      auto d = ParseDuration(v);
      if (!d.ok())
        return Status::InvalidArgument("--" + std::string(flag) + ": " + d.status().message());
      *out = *d;
      return Status::Ok();
    };
  };
  auto str = [](std::string* out) -> Setter {
    return [out](std::string_view v) {
      *out = std::string(v);
      return Status::Ok();
    };
  };
  auto addr = [](std::string_view flag, std::string* out) -> Setter {
    return [flag, out](std::string_view v) -> Status {
      auto hp = ParseHostPort(v);
      if (!hp.ok())
        return Status::InvalidArgument("--" + std::string(flag) + ": " + hp.status().message());
      *out = std::string(v);
      return Status::Ok();
    };
  };
  const std::map<std::string, Setter, std::less<>> value_flags = {
      {"kubeconfig", str(&o.kubeconfig)},
      {"namespaces",
       [&o](std::string_view v) {
         o.namespaces = SplitComma(v);
         return Status::Ok();
       }},
      {"lease-namespace", str(&o.lease_namespace)},
      {"leader-election-namespace", str(&o.lease_namespace)},  // alias (controller-runtime's name)
      {"lease-name", str(&o.lease_name)},
      {"identity", str(&o.identity)},
      {"lease-duration", duration("lease-duration", &o.lease_duration)},
      {"renew-deadline", duration("renew-deadline", &o.renew_deadline)},
      {"retry-period", duration("retry-period", &o.retry_period)},
      {"health-addr", addr("health-addr", &o.health_addr)},
      {"metrics-addr", addr("metrics-addr", &o.metrics_addr)},
      {"workers",
       [&o](std::string_view v) -> Status {
         long long n = 0;
         if (!ParseInt(v, &n) || n < 1 || n > 256)
           return Status::InvalidArgument("--workers: \"" + std::string(v) +
                                          "\" is not a worker count; use an integer from 1 to 256");
         o.workers = static_cast<int>(n);
         return Status::Ok();
       }},
      {"probe-workers",
       [&o](std::string_view v) -> Status {
         long long n = 0;
         if (!ParseInt(v, &n) || n < 1 || n > 256)
           return Status::InvalidArgument("--probe-workers: \"" + std::string(v) +
                                          "\" is not a thread count; use an integer from 1 to 256");
         o.probe_workers = static_cast<int>(n);
         return Status::Ok();
       }},
      {"probe-timeout", duration("probe-timeout", &o.probe_timeout)},
      {"probe-interval", duration("probe-interval", &o.probe_interval)},
      {"resync-period", duration("resync-period", &o.resync_period)},
      {"field-manager", str(&o.field_manager)},
      {"log-level", str(&o.log_level)},
  };
  const std::map<std::string, bool*, std::less<>> bool_flags = {
      {"leader-elect", &o.leader_elect},
      {"help", &o.help},
  };

  for (size_t i = 0; i < args.size(); i++) {
    std::string_view arg = args[i];
    if (arg == "-h") {
      o.help = true;
      continue;
    }
    if (arg.substr(0, 2) != "--") {
      return Status::InvalidArgument("unexpected argument \"" + std::string(arg) +
                                     "\"; flags start with -- (see --help)");
    }
    arg.remove_prefix(2);
    std::string_view name = arg;
    std::optional<std::string_view> value;
    if (size_t eq = arg.find('='); eq != std::string_view::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    }
    if (auto b = bool_flags.find(name); b != bool_flags.end()) {
      if (value)
        SB_RETURN_IF_ERROR(ParseBool(name, *value, b->second));
      else
        *b->second = true;
      continue;
    }
    auto f = value_flags.find(name);
    if (f == value_flags.end()) {
      return Status::InvalidArgument("unknown flag --" + std::string(name) + " (see --help)");
    }
    if (!value) {
      if (i + 1 >= args.size()) {
        return Status::InvalidArgument("--" + std::string(name) + " needs a value");
      }
      value = args[++i];
    }
    SB_RETURN_IF_ERROR(f->second(*value));
  }

  if (!o.log_level.empty()) {
    log::Level level;
    if (!log::ParseLevel(o.log_level, &level)) {
      return Status::InvalidArgument("--log-level: \"" + o.log_level +
                                     "\" is not a level; use debug, info, warn or error");
    }
  }
  if (o.lease_duration <= o.renew_deadline) {
    return Status::InvalidArgument(
        "--lease-duration must be greater than --renew-deadline (a leader must give up before "
        "its lease can be taken)");
  }
  if (o.renew_deadline <= o.retry_period) {
    return Status::InvalidArgument("--renew-deadline must be greater than --retry-period");
  }
  if (o.probe_timeout.count() <= 0) {
    return Status::InvalidArgument("--probe-timeout must be positive, e.g. 5s");
  }
  if (o.probe_interval.count() <= 0) {
    return Status::InvalidArgument("--probe-interval must be positive, e.g. 5m");
  }
  return o;
}

std::string Usage() {
  return R"(Usage: switchboard-operator [flags]

Reconciles PubSubBackend and NatsServer objects (pubsub.switchboard.dev/v1alpha1).

Flags:
  --kubeconfig PATH        kubeconfig file; default $KUBECONFIG, else in-cluster config
  --namespaces a,b         namespaces to watch; empty (default) = all namespaces
  --leader-elect           run leader election over a coordination.k8s.io/v1 Lease
  --lease-namespace NS     namespace of the Lease; default $POD_NAMESPACE, else the
                           kubeconfig's namespace (alias: --leader-election-namespace)
  --lease-name NAME        name of the Lease (default switchboard-operator)
  --identity ID            holder identity; default <hostname>_<pid>
  --lease-duration D       how long a lease is valid without renewal (default 15s)
  --renew-deadline D       leader gives up leadership if it cannot renew for this long (default 10s)
  --retry-period D         how often to try to acquire or renew (default 2s)
  --health-addr ADDR       /healthz and /readyz, plain HTTP (default :8081; 0 disables)
  --metrics-addr ADDR      Prometheus /metrics (default :8080; 0 disables)
  --workers N              concurrent reconciles per kind (default 4)
  --probe-workers N        concurrent NATS probes, off the reconcile workers (default 8)
  --probe-timeout D        deadline of one NATS probe (default 5s)
  --probe-interval D       re-probe Ready backends this often (default 5m)
  --resync-period D        re-queue every object this often; 0 = never (default 0)
  --field-manager NAME     server-side apply field manager (default switchboard-operator)
  --log-level LEVEL        debug | info | warn | error (default info or $SWITCHBOARD_LOG_LEVEL)
  --help                   this text
Durations: 500ms, 5s, 10m, 1h, 1m30s. Addresses: host:port or :port.
)";
}

}  // namespace switchboard::operator_controller
