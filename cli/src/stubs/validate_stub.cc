// Placeholder until the validation rules land.
#include <cstdio>

#include "commands.h"

namespace switchboard::cli {
int RunValidate(const std::vector<std::string>&) {
  std::fprintf(stderr, "switchboard validate: this build has no webhook (validation) component\n");
  return 2;
}
}  // namespace switchboard::cli
