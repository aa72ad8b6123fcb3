// `switchboard`: the project's one command-line tool.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "commands.h"

namespace switchboard::cli {
namespace {

const Command kCommands[] = {
    {"pubsub", "publish, subscribe, probe and benchmark a Hatchet NATS pub/sub", RunPubsub},
    {"validate", "check PubSubBackend/NatsServer manifests offline (GitOps)", RunValidate},
};

void Usage(FILE* out) {
  std::fprintf(out,
               "Usage: switchboard <command> [flags]\n\n"
               "Switchboard provisions and validates Hatchet's NATS pub/sub on Kubernetes.\n\n"
               "Commands:\n");
  for (const auto& c : kCommands) std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
  std::fprintf(out, "\nRun 'switchboard <command> --help' for a command's flags.\n");
}

}  // namespace
}  // namespace switchboard::cli

int main(int argc, char** argv) {
  using namespace switchboard::cli;
  if (argc < 2) {
    Usage(stderr);
    return 2;
  }
  std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    Usage(stdout);
    return 0;
  }
  if (name == "--version" || name == "version") {
    std::printf("switchboard %s\n", SWITCHBOARD_VERSION);
    return 0;
  }
  std::vector<std::string> args(argv + 1, argv + argc);
  for (const auto& c : kCommands) {
    if (name == c.name) return c.run(args);
  }
  std::fprintf(stderr, "switchboard: unknown command '%s'\n\n", name.c_str());
  Usage(stderr);
  return 2;
}
