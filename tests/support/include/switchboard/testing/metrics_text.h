// Reading samples out of a Prometheus text exposition (what /metrics
// returns), for tests and benchmarks that judge a process by its metrics.
#pragma once

#include <string_view>

namespace switchboard::testing {

// The sum of the samples of metric `name` whose label set contains
// `label` (a substring such as `kind="PubSubBackend"`; "" matches every
// sample, labelled or not). Only whole metric names match: `name` must
// start a line and be followed by `{` or a space, so a name that is the
// prefix of another (`_total` of `_total_x`) is not summed in. HELP and
// TYPE lines never match. 0 when there is no such sample.
double MetricSum(std::string_view text, std::string_view name, std::string_view label = "");

}  // namespace switchboard::testing
