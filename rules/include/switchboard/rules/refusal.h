// What kind of refusal a Report is, for the operator's status: a Secret
// name that another object (or another field of the same object) also
// makes Switchboard write is a conflict to resolve by renaming, not a
// spec that is wrong in itself.
#pragma once

#include <string_view>

#include "switchboard/rules/validate.h"

namespace switchboard::rules {

// The rule id of a Secret name claimed twice (rules/README.md).
inline constexpr std::string_view kSecretCollisionRule = "secret-collision";

// True when `report` has errors and each is a kSecretCollisionRule one:
// the operator says Ready=False SecretConflict (as for a Secret it does
// not own) rather than InvalidSpec.
bool OnlySecretCollisions(const Report& report);

}  // namespace switchboard::rules
