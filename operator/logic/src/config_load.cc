#include "switchboard/operator_logic/config_load.h"

namespace switchboard::operator_logic {

ConfigLoad DecideConfigLoad(const ConfigLoadFacts& f) {
  if (f.reported_hash.empty()) return ConfigLoad::kUnknown;
  // The caller found the user in the current content.
  if (f.reported_hash == f.current_hash) return ConfigLoad::kLoaded;
  if (!f.reported_order) return ConfigLoad::kUnknown;
  if (*f.reported_order >= f.user_order) return ConfigLoad::kLoaded;
  if (f.user_waiting >= f.patience) return ConfigLoad::kUnknown;
  return ConfigLoad::kPending;
}

}  // namespace switchboard::operator_logic
