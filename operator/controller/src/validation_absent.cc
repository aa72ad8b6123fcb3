// Built only when webhook/rules is missing from the checkout: the operator
// then accepts every object as valid (and says so once). The real rule set
// replaces this file as soon as it is present.
#include <atomic>

#include "switchboard/common/log.h"
#include "switchboard/validation/validate.h"

namespace switchboard::validation {

Report Validate(const nlohmann::json&, const Context&, Operation, const nlohmann::json*) {
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true)) {
    log::Warn("operator", "built without the shared validation rules (webhook/rules missing)");
  }
  return {};
}

nlohmann::json DefaultedCopy(const nlohmann::json& object) { return object; }
nlohmann::json DefaultingPatch(const nlohmann::json&) { return nlohmann::json::array(); }

}  // namespace switchboard::validation
