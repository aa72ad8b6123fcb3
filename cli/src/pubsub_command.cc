// Placeholder until the runtime lands its pubsub subcommands.
#include <cstdio>

#include "commands.h"

namespace switchboard::cli {
int RunPubsub(const std::vector<std::string>&) {
  std::fprintf(stderr, "switchboard pubsub: not implemented yet\n");
  return 2;
}
}  // namespace switchboard::cli
