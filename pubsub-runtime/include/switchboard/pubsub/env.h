// Connection settings from the engine's own environment variables, so an
// env Secret written for a Hatchet engine works unchanged for the CLI and
// the operator's probe. Shared by both; never logs the password.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "switchboard/pubsub/nats_pubsub.h"

namespace switchboard::pubsub {

inline constexpr const char* kEnvUrl = "SERVER_MSGQUEUE_PUBSUB_NATS_URL";
inline constexpr const char* kEnvUsername = "SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME";
inline constexpr const char* kEnvPassword = "SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD";
inline constexpr const char* kEnvSubjectPrefix = "SERVER_MSGQUEUE_PUBSUB_NATS_SUBJECT_PREFIX";

struct ConnectionSettings {
  std::string urls;  // comma-separated seeds
  std::string username;
  std::string password;
  std::string subject_prefix = kDefaultSubjectPrefix;
};

// Looks a variable up; nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
// Reads the process environment.
std::optional<std::string> ProcessEnv(const std::string& name);
// Reads a map, e.g. the data of an env Secret.
EnvLookup MapEnv(const std::map<std::string, std::string>& vars);

// Reads the four SERVER_MSGQUEUE_PUBSUB_NATS_* variables. Unset or empty
// prefix means hatchet.pubsub, as in the engine.
ConnectionSettings SettingsFromEnv(const EnvLookup& lookup = ProcessEnv);

// NatsOptions for these settings (other options at their defaults).
NatsOptions ToNatsOptions(const ConnectionSettings& settings);

}  // namespace switchboard::pubsub
