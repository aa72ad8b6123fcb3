// Whether a NATS server has loaded a config that carries a user, from what
// its reloader reports on the config Secret (annotation
// api::kLoadedConfigHashAnnotation, docs/api.md). A probe of a user the
// server has not loaded yet is refused, so while the report says "not yet"
// the operator waits for the next report instead of probing and retrying.
// The report only saves probes: a passing probe stays what makes a backend
// Ready, and without a report (the NATS chart's own reloader writes none)
// the operator probes as before. Pure; the controller's ConfigIndex gathers
// the facts.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace switchboard::operator_logic {

enum class ConfigLoad {
  kUnknown,  // nothing reported, or a config this process never saw: probe to find out
  kLoaded,   // the reported config carries the user: probe now
  kPending,  // the reported config came before the user's: a probe would be refused
};

// Configs are numbered in the order this process saw the config Secret's
// content change (1, 2, ...); a restart starts again at 1, with every user
// in the first config it sees.
struct ConfigLoadFacts {
  std::string reported_hash;                  // the annotation; "" when nothing reports
  std::string current_hash;                   // ConfigHash of the Secret's current content
  std::optional<uint64_t> reported_order;     // of reported_hash; nullopt: never seen here
  uint64_t user_order = 0;                    // of the first config that carried the user
  std::chrono::milliseconds user_waiting{0};  // since that config was seen
  // How long a report that stays behind is believed: a reloader that
  // stopped reporting must not hold a backend back for ever.
  std::chrono::milliseconds patience{0};
};

ConfigLoad DecideConfigLoad(const ConfigLoadFacts& facts);

}  // namespace switchboard::operator_logic
