#include "switchboard/authorizer/options.h"

#include "switchboard/common/service_main.h"

namespace switchboard::authorizer {
namespace {

constexpr const char* kUsage = R"(Usage: switchboard-authorizer [flags]

Answers NATS auth callout requests ($SYS.REQ.USER.AUTH) for NatsServers in
AuthCallout mode, from the PubSubBackends and their credentials Secrets, and
closes the connections of users and passwords that are no longer accepted.)";

void Register(flags::FlagSet* set, Options* o) {
  service::ClusterFlags(set, &o->kubeconfig, &o->namespaces);
  set->List("servers", "ns/name,...", &o->servers,
            "NatsServers to serve; default every NatsServer in AuthCallout mode it can see",
            [](const std::string& s) -> Status {
              size_t slash = s.find('/');
              if (slash == std::string::npos || slash == 0 || slash + 1 == s.size() ||
                  s.find('/', slash + 1) != std::string::npos) {
                return Status::InvalidArgument("\"" + s + "\" is not namespace/name");
              }
              return Status::Ok();
            });
  service::EndpointFlags(set, &o->health, &o->metrics);
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
  return flags::ParseInto<Options>(kUsage, args, Register);
}

std::string Usage() { return flags::HelpFor<Options>(kUsage, Register); }

}  // namespace switchboard::authorizer
