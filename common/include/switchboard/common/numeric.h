// Range-checked conversions from floating point to integers.
//
// Casting a double outside the target's range to an integer is undefined
// behaviour in C++, and documents we judge (YAML, JSON, flags) carry doubles
// of any size: `maxConns: 1e300`, `.inf`, `-.nan`. Every such conversion in
// the tree goes through here so the check is written once.
#pragma once

#include <cstdint>
#include <optional>

namespace switchboard {

// The int64 equal to d when d is finite, has no fractional part and lies in
// [-2^63, 2^63); nullopt otherwise. -0.0 gives 0.
std::optional<int64_t> WholeToInt64(double d);

// d truncated toward zero when it lies in (-2^63 - 1, 2^63), nullopt for NaN,
// infinities and anything out of range. For values already known to be a
// measurement (milliseconds from a flag), where a fraction may be dropped.
std::optional<int64_t> TruncateToInt64(double d);

}  // namespace switchboard
