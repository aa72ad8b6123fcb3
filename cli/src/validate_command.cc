// Placeholder until the validation rules land.
#include <cstdio>

#include "commands.h"

namespace switchboard::cli {
int RunValidate(const std::vector<std::string>&) {
  std::fprintf(stderr, "switchboard validate: not implemented yet\n");
  return 2;
}
}  // namespace switchboard::cli
