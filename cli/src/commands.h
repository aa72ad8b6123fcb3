// The `switchboard` command's subcommands. Each lives in its own file and
// receives the arguments after its name (args[0] is the subcommand name).
// Return value is the process exit code.
#pragma once

#include <string>
#include <vector>

namespace switchboard::cli {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
};

// Defined in the subcommand files; a missing one is a link error, not a
// silent gap.
int RunPubsub(const std::vector<std::string>& args);    // src/pubsub/
int RunValidate(const std::vector<std::string>& args);  // src/validate/

}  // namespace switchboard::cli
