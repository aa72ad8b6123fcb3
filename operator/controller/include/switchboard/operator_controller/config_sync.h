// The heart of `switchboard-config-sync`, a dev/test stand-in for the NATS
// Helm chart's config reloader: it mirrors one key of the NatsServer's config
// Secret into a file that a local nats-server config `include`s, and asks
// that nats-server to reload (SIGHUP) whenever the file's content changed.
// Given the server's monitoring URL it also tells the operator what the
// server loaded: once /varz shows a new config_load_time it sets the
// annotation api::kLoadedConfigHashAnnotation on the Secret (docs/api.md).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

#include "switchboard/common/status.h"

namespace switchboard::operator_controller {

// Writes `content` to `path` atomically (temp file in the same directory,
// fsync, rename) unless the file already holds exactly these bytes. Returns
// true when it wrote.
Result<bool> WriteFileIfChanged(const std::string& path, const std::string& content);

// The decoded value of data[key] of a Secret object (base64 in the API's
// JSON). NotFound when the key is absent; InvalidArgument when it does not
// decode.
Result<std::string> SecretValue(const std::string& secret_json_text, const std::string& key);

// Reads a pid from a pid file ("1234\n").
Result<pid_t> ReadPidFile(const std::string& path);

// config_load_time of a nats-server /varz answer (changes with every
// successful reload; a refused reload leaves it). InvalidArgument when the
// answer has none.
Result<std::string> VarzConfigLoadTime(std::string_view varz_json_text);

}  // namespace switchboard::operator_controller
