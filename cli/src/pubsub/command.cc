// `switchboard pubsub`: publish, subscribe, probe and benchmark a Hatchet
// installation's NATS pub/sub with the engine's own settings.
#include <cstdio>
#include <cstring>

#include "commands.h"
#include "pubsub/subcommands.h"
#include "switchboard/pubsub/nats_pubsub.h"

namespace switchboard::cli {
namespace {

const char kUsage[] =
    "Usage: switchboard pubsub <command> [flags]\n\n"
    "Hatchet's NATS pub/sub, wire-compatible with the Go engine.\n\n"
    "Commands:\n"
    "  pub     publish a Hatchet message to a tenant, scheduler or raw topic\n"
    "  sub     subscribe and print one JSON message per line (as a Go handler sees it)\n"
    "  probe   connect, check max_payload, publish and receive on the prefix\n"
    "  bench   measure end-to-end message throughput\n\n"
    "Connection settings come from flags or the engine's env vars\n"
    "(SERVER_MSGQUEUE_PUBSUB_NATS_URL, _USERNAME, _PASSWORD, _SUBJECT_PREFIX).\n"
    "Run 'switchboard pubsub <command> --help' for its flags.\n";

}  // namespace

int RunPubsub(const std::vector<std::string>& args) {
  if (args.size() < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string& sub = args[1];
  if (sub == "--help" || sub == "-h" || sub == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  int rc = -1;
  if (sub == "pub") rc = pubsub::RunPub(args);
  if (sub == "sub") rc = pubsub::RunSub(args);
  if (sub == "probe") rc = pubsub::RunProbe(args);
  if (sub == "bench") rc = pubsub::RunBench(args);
  if (rc < 0) {
    std::fprintf(stderr, "switchboard pubsub: unknown command '%s'\n\n%s", sub.c_str(), kUsage);
    return 2;
  }
  // Every connection and subscription is gone with the subcommand's
  // locals: nats.c's threads are joined before main returns.
  if (Status s = switchboard::pubsub::ShutdownNats(); !s.ok()) {
    std::fprintf(stderr, "switchboard pubsub %s: %s\n", sub.c_str(), s.ToString().c_str());
    if (rc == 0) rc = 1;
  }
  return rc;
}

}  // namespace switchboard::cli
