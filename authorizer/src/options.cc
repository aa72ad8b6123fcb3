#include "switchboard/authorizer/options.h"

namespace switchboard::authorizer {
namespace {

constexpr const char* kUsage = R"(Usage: switchboard-authorizer [flags]

Answers NATS auth callout requests ($SYS.REQ.USER.AUTH) for NatsServers in
AuthCallout mode, from the PubSubBackends and their credentials Secrets, and
closes the connections of users and passwords that are no longer accepted.)";

void Register(flags::FlagSet* set, Options* o) {
  set->String("kubeconfig", &o->kubeconfig,
              "kubeconfig file; default $KUBECONFIG, else in-cluster config")
      .Metavar("PATH");
  set->Value("namespaces", "a,b", "namespaces to watch; empty (default) = all namespaces",
             [o](std::string_view v) {
               o->namespaces = flags::SplitList(v);
               return Status::Ok();
             });
  set->Value("servers", "ns/name,...",
             "NatsServers to serve; default every NatsServer in AuthCallout mode it can see",
             [o](std::string_view v) -> Status {
               o->servers = flags::SplitList(v);
               for (const auto& s : o->servers) {
                 size_t slash = s.find('/');
                 if (slash == std::string::npos || slash == 0 || slash + 1 == s.size() ||
                     s.find('/', slash + 1) != std::string::npos) {
                   return Status::InvalidArgument("\"" + s + "\" is not namespace/name");
                 }
               }
               return Status::Ok();
             });
  auto addr = [](flags::HostPort* out) {
    return [out](std::string_view v) -> Status {
      auto hp = flags::ParseHostPort(v);
      if (hp.ok()) *out = *hp;
      return hp.status();
    };
  };
  set->Value("health-addr", "ADDR", "/healthz and /readyz, plain HTTP (default :8081; 0 disables)",
             addr(&o->health));
  set->Value("metrics-addr", "ADDR", "Prometheus /metrics (default :8080; 0 disables)",
             addr(&o->metrics));
  set->Duration("sweep-interval", &o->sweep_interval,
                "look for connections to close this often, besides after every change\n"
                "that removes a user or a password (default 30s)",
                std::chrono::milliseconds(100));
  set->Duration("kick-after", &o->kick_after,
                "close a connection only when it was still unaccepted this long after\n"
                "first seen, so a replica whose caches lag does not close a new\n"
                "installation's connection (default 3s)");
  set->Int("request-workers", &o->request_workers,
           "threads answering callout requests per NatsServer (default 4)", 1, 256);
  set->LogLevel(&o->log_level);
}

}  // namespace

Result<Options> ParseOptions(const std::vector<std::string>& args) {
  Options o;
  flags::FlagSet set(kUsage);
  Register(&set, &o);
  SB_RETURN_IF_ERROR(set.Parse(args));
  o.help = set.help();
  return o;
}

std::string Usage() {
  Options o;
  flags::FlagSet set(kUsage);
  Register(&set, &o);
  return set.Help() + "Addresses: host:port or :port.\n";
}

}  // namespace switchboard::authorizer
