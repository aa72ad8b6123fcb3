// Go time.Duration strings ("10m", "1h30m", "90s", "1.5h"), as used by
// spec.nats.credentials.rotationGracePeriod. Pure.
#pragma once

#include <cstdint>
#include <string_view>

#include "switchboard/common/status.h"

namespace switchboard::api {

// Nanoseconds, parsed the way Go's time.ParseDuration does: a sequence of
// decimal numbers each with a unit (ns, us, µs, ms, s, m, h), an optional
// sign, or "0". InvalidArgument naming the problem otherwise, or on overflow.
Result<int64_t> ParseDuration(std::string_view text);

}  // namespace switchboard::api
