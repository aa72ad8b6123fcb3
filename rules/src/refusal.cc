#include "switchboard/rules/refusal.h"

#include <algorithm>

namespace switchboard::rules {

bool OnlySecretCollisions(const Report& report) {
  return !report.errors.empty() &&
         std::all_of(report.errors.begin(), report.errors.end(),
                     [](const Finding& f) { return f.rule == kSecretCollisionRule; });
}

}  // namespace switchboard::rules
