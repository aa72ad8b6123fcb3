// Placeholder until the runtime lands its pubsub subcommands.
#include <cstdio>

#include "commands.h"

namespace switchboard::cli {
int RunPubsub(const std::vector<std::string>&) {
  std::fprintf(stderr, "switchboard pubsub: this build has no pubsub-runtime component\n");
  return 2;
}
}  // namespace switchboard::cli
