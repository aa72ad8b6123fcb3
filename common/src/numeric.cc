#include "switchboard/common/numeric.h"

#include <cmath>

namespace switchboard {

namespace {
// 2^63 is exactly representable as a double; INT64_MAX is not (it rounds up
// to 2^63), which is why the upper bound is exclusive and written this way.
constexpr double kTwoTo63 = 9223372036854775808.0;
}  // namespace

std::optional<int64_t> TruncateToInt64(double d) {
  if (!std::isfinite(d)) return std::nullopt;
  double t = std::trunc(d);
  if (t < -kTwoTo63 || t >= kTwoTo63) return std::nullopt;
  return static_cast<int64_t>(t);
}

std::optional<int64_t> WholeToInt64(double d) {
  if (!std::isfinite(d) || std::trunc(d) != d) return std::nullopt;
  return TruncateToInt64(d);
}

}  // namespace switchboard
