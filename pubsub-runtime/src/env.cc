#include "switchboard/pubsub/env.h"

#include <cstdlib>

namespace switchboard::pubsub {

std::optional<std::string> ProcessEnv(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

EnvLookup MapEnv(const std::map<std::string, std::string>& vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

ConnectionSettings SettingsFromEnv(const EnvLookup& lookup) {
  ConnectionSettings s;
  s.urls = lookup(kEnvUrl).value_or("");
  s.username = lookup(kEnvUsername).value_or("");
  s.password = lookup(kEnvPassword).value_or("");
  std::string prefix = lookup(kEnvSubjectPrefix).value_or("");
  if (!prefix.empty()) s.subject_prefix = prefix;
  return s;
}

NatsOptions ToNatsOptions(const ConnectionSettings& settings) {
  NatsOptions o;
  o.urls = settings.urls;
  o.username = settings.username;
  o.password = settings.password;
  o.subject_prefix = settings.subject_prefix;
  return o;
}

}  // namespace switchboard::pubsub
