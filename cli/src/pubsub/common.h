// Helpers shared by the `switchboard pubsub` subcommands.
#pragma once

#include <cstdio>
#include <string>

#include "flags.h"
#include "switchboard/common/status.h"
#include "switchboard/pubsub/topic.h"

namespace switchboard::cli::pubsub {

// Exit codes: 0 ok, 1 failure (server, timeout, probe unhealthy), 2 usage.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// --tenant / --scheduler / --topic: exactly one selects the topic.
struct TopicFlags {
  std::string tenant, scheduler, topic;
  void Register(flags::FlagSet* flags);
  Result<switchboard::pubsub::Topic> Resolve() const;
};

// Prints "switchboard pubsub <cmd>: <status>" to stderr; returns `code`.
int Fail(const std::string& cmd, const Status& status, int code = kExitFailure);

// Parses args[2..]; prints help (exit 0) or a usage error (exit 2). Returns
// -1 when the command should run.
int ParseOrExit(flags::FlagSet* flags, const std::vector<std::string>& args,
                const std::string& cmd);

// Quiet library logs unless SWITCHBOARD_LOG_LEVEL asks for them.
void QuietLogs();

Result<std::string> ReadFileOrStdin(const std::string& path);

}  // namespace switchboard::cli::pubsub
