// A small flag parser for the `switchboard pubsub` subcommands:
// --name value, --name=value, boolean --name, repeatable flags, --help.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "switchboard/common/status.h"
#include "switchboard/pubsub/nats_pubsub.h"

namespace switchboard::cli::pubsub {

class Flags {
 public:
  explicit Flags(std::string usage) : usage_(std::move(usage)) {}

  void String(const std::string& name, std::string* target, const std::string& help);
  void Strings(const std::string& name, std::vector<std::string>* target, const std::string& help);
  void Bool(const std::string& name, bool* target, const std::string& help);
  void Int(const std::string& name, int64_t* target, const std::string& help);
  // Durations: "500ms", "5s", "2m", or a plain number of seconds.
  void Duration(const std::string& name, std::chrono::milliseconds* target,
                const std::string& help);

  // Parses args[start..]; positional arguments are collected. Errors name
  // the flag.
  Status Parse(const std::vector<std::string>& args, size_t start);
  bool help() const { return help_; }
  const std::vector<std::string>& positional() const { return positional_; }
  // True when the flag appeared on the command line.
  bool Given(const std::string& name) const;
  std::string Help() const;

 private:
  enum class Kind { kString, kStrings, kBool, kInt, kDuration };
  struct Def {
    std::string name;
    Kind kind;
    void* target;
    std::string help;
    bool given = false;
  };
  Def* Find(const std::string& name);

  std::string usage_;
  std::vector<Def> defs_;
  std::vector<std::string> positional_;
  bool help_ = false;
};

// Connection flags shared by every subcommand, defaulting to the engine's
// SERVER_MSGQUEUE_PUBSUB_NATS_* variables.
struct ConnectionFlags {
  std::string url, username, password, prefix, ca_file, cert_file, key_file;
  std::chrono::milliseconds timeout{5000};

  void Register(Flags* flags);
  // Flags win over the environment.
  switchboard::pubsub::NatsOptions ToOptions() const;
  static const char* EnvHelp();
};

bool ParseDuration(const std::string& text, std::chrono::milliseconds* out);

}  // namespace switchboard::cli::pubsub
