// How many PubSubBackends stand at each Ready status and reason, as their
// stored status says: the figure behind switchboard_pubsubbackends. Kept
// from a cache's events (Set per add, update and delete), so it is a level,
// always what the cache holds now, whatever events were missed in between.
// Pure; not thread-safe (the caller serialises Set and Counts).
#pragma once

#include <compare>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace switchboard::operator_logic {

// Ready's status ("True" | "False" | "Unknown") and reason.
struct ReadyState {
  std::string status;
  std::string reason;
  auto operator<=>(const ReadyState&) const = default;
};

// The reason of a backend that has no Ready condition yet (Unknown): the
// operator has not reported on it since it was created.
inline constexpr std::string_view kNotReconciled = "NotReconciled";

// The Ready condition stored in `backend` (an object as the API or a cache
// holds it): {Unknown, NotReconciled} when there is none.
ReadyState ReadyStateOf(const nlohmann::json& backend);

class ReadyTally {
 public:
  // Records backend `key`'s state; nullopt: it is gone.
  void Set(const std::string& key, const std::optional<ReadyState>& state);
  // Every state seen since construction with how many backends hold it now:
  // a state nobody holds any more stays, at 0, so its series drops to 0
  // rather than vanishing (an alert on it resolves instead of going stale).
  const std::map<ReadyState, int>& Counts() const { return counts_; }
  size_t size() const { return by_key_.size(); }

 private:
  std::unordered_map<std::string, ReadyState> by_key_;
  std::map<ReadyState, int> counts_;
};

}  // namespace switchboard::operator_logic
