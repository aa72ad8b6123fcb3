// Connection flags shared by every `switchboard pubsub` subcommand. The
// parser is the project's one (switchboard/common/flags.h).
#pragma once

#include <chrono>
#include <string>

#include "switchboard/common/flags.h"
#include "switchboard/pubsub/nats_pubsub.h"

namespace switchboard::cli::pubsub {

// --url, --username, --password, --prefix and TLS files, defaulting to the
// engine's SERVER_MSGQUEUE_PUBSUB_NATS_* variables.
struct ConnectionFlags {
  std::string url, username, password, prefix, ca_file, cert_file, key_file;
  std::chrono::milliseconds timeout{5000};

  void Register(flags::FlagSet* flags);
  // Flags win over the environment.
  switchboard::pubsub::NatsOptions ToOptions() const;
  static const char* EnvHelp();
};

}  // namespace switchboard::cli::pubsub
