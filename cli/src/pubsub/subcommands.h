// The `switchboard pubsub` subcommands; args[0] is "pubsub", args[1] the
// subcommand. Each returns the process exit code (0 ok, 1 failure, 2 usage).
#pragma once

#include <string>
#include <vector>

namespace switchboard::cli::pubsub {

int RunPub(const std::vector<std::string>& args);
int RunSub(const std::vector<std::string>& args);
int RunProbe(const std::vector<std::string>& args);
int RunBench(const std::vector<std::string>& args);

}  // namespace switchboard::cli::pubsub
