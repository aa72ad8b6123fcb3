// When the authorizer rebuilds what it serves. A rebuild reads every cached
// installation (O(N)); under a create burst the caches change many times a
// second, and two authorizers rebuilding on every change would take the
// CPU the API server and the operator need (one rebuild's CPU grows with
// the installations; BENCHMARKS.md has the figures). So a change wakes a rebuild only when it
// alters something a decision reads, and after each rebuild the next waits
// in proportion to what this one took: the changes meanwhile are one
// rebuild, and rebuilding never takes more than a bounded share of the
// time.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>

namespace switchboard::authorizer {

// Whether replacing NatsServer `before` with `after` in its cache can
// change what is served: false when they differ only in
// metadata.resourceVersion (an update to something the masked parse
// dropped, such as the status). Backends and Secrets: InstallationCache's
// event steps compare the records.
bool ChangesWhatIsServed(const nlohmann::json& before, const nlohmann::json& after);

// The pause after a rebuild that took `took` before the next one starts:
// kRebuildPauseFactor times as long, at most kMaxRebuildPause, so a new
// installation waits for its rebuild well under a second at any size.
inline constexpr int kRebuildPauseFactor = 3;
inline constexpr std::chrono::milliseconds kMaxRebuildPause{750};
std::chrono::milliseconds RebuildPause(std::chrono::steady_clock::duration took);

}  // namespace switchboard::authorizer
