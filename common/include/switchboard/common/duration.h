// Go time.Duration text ("10m", "1h30m", "90s", "1.5h", "500ms"): the one
// duration grammar in the project, for spec.nats.credentials
// .rotationGracePeriod (through the rules and the operator) and for every
// command-line flag (switchboard/common/flags.h). Pure.
#pragma once

#include <cstdint>
#include <string_view>

#include "switchboard/common/status.h"

namespace switchboard {

// Nanoseconds, parsed the way Go's time.ParseDuration does: a sequence of
// decimal numbers each with a unit (ns, us, µs, ms, s, m, h), an optional
// sign, or "0". A bare number other than 0 is refused, as in Go.
// InvalidArgument naming the text, the problem and the fix otherwise, or on
// overflow.
Result<int64_t> ParseDuration(std::string_view text);

}  // namespace switchboard
