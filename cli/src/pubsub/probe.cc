// `switchboard pubsub probe`: is this installation's pub/sub healthy?
#include "switchboard/pubsub/probe.h"

#include "common.h"
#include "subcommands.h"

namespace switchboard::cli::pubsub {

namespace ps = switchboard::pubsub;

int RunProbe(const std::vector<std::string>& args) {
  flags::FlagSet flags(
      "Usage: switchboard pubsub probe [flags]\n\n"
      "Connects with the given credentials, checks the server's max_payload (>= 16 MiB),\n"
      "then publishes a Hatchet message on <prefix>.switchboard_probe_v1 and waits for it.\n"
      "Exits 0 when healthy; 1 with the reason otherwise (unreachable, unauthenticated,\n"
      "max_payload too small, permission denied on the prefix, timeout).\n\n" +
      std::string(ConnectionFlags::EnvHelp()));
  ConnectionFlags conn;
  bool json = false;
  conn.Register(&flags);
  flags.Duration("timeout", &conn.timeout, "connect and round-trip timeout (default 5s)");
  flags.Bool("json", &json, "print the report as JSON");
  if (int rc = ParseOrExit(&flags, args, "probe"); rc >= 0) return rc;
  if (!conn.cert_file.empty() || !conn.key_file.empty()) {
    return Fail("probe", Status::InvalidArgument("--cert-file/--key-file: not supported by probe"),
                kExitUsage);
  }
  QuietLogs();
  ps::NatsOptions o = conn.ToOptions();
  auto report = ps::Probe({.urls = o.urls,
                           .username = o.username,
                           .password = o.password,
                           .subject_prefix = o.subject_prefix,
                           .ca_file = o.ca_file,
                           .timeout = conn.timeout});
  if (!report.ok()) {
    if (json) {
      std::printf("{\"healthy\":false,\"code\":\"%s\"}\n",
                  std::string(StatusCodeName(report.status().code())).c_str());
    }
    return Fail("probe", report.status());
  }
  if (json) {
    std::printf("{\"healthy\":true,\"url\":\"%s\",\"max_payload\":%lld,\"round_trip_us\":%lld}\n",
                report->connected_url.c_str(), static_cast<long long>(report->server_max_payload),
                static_cast<long long>(report->round_trip.count()));
  } else {
    std::printf("healthy: %s, max_payload %lld bytes, prefix %s, round trip %lld us\n",
                report->connected_url.c_str(), static_cast<long long>(report->server_max_payload),
                o.subject_prefix.c_str(), static_cast<long long>(report->round_trip.count()));
  }
  return kExitOk;
}

}  // namespace switchboard::cli::pubsub
