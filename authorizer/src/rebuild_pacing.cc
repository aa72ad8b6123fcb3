#include "switchboard/authorizer/rebuild_pacing.h"

#include <algorithm>

namespace switchboard::authorizer {

bool ChangesWhatIsServed(const nlohmann::json& before, const nlohmann::json& after) {
  if (!before.is_object() || !after.is_object() || before.size() != after.size()) {
    return before != after;
  }
  for (auto it = after.begin(); it != after.end(); ++it) {
    auto old = before.find(it.key());
    if (old == before.end()) return true;
    if (it.key() != "metadata") {
      if (*old != it.value()) return true;
      continue;
    }
    const nlohmann::json& a = *old;
    const nlohmann::json& b = it.value();
    if (!a.is_object() || !b.is_object()) {
      if (a != b) return true;
      continue;
    }
    // Every member but resourceVersion, both ways.
    for (auto m = b.begin(); m != b.end(); ++m) {
      if (m.key() == "resourceVersion") continue;
      auto o = a.find(m.key());
      if (o == a.end() || *o != m.value()) return true;
    }
    for (auto m = a.begin(); m != a.end(); ++m) {
      if (m.key() != "resourceVersion" && !b.contains(m.key())) return true;
    }
  }
  return false;
}

std::chrono::milliseconds RebuildPause(std::chrono::steady_clock::duration took) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(took);
  return std::clamp(ms * kRebuildPauseFactor, std::chrono::milliseconds(0), kMaxRebuildPause);
}

}  // namespace switchboard::authorizer
