#include "config_fit.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "switchboard/api/claims.h"

namespace switchboard::operator_logic::internal {

std::vector<std::vector<bool>> FitToLimit(const std::vector<FitInstallation>& installations,
                                          const FitLimits& limits) {
  std::vector<std::vector<bool>> keep(installations.size());
  for (size_t i = 0; i < installations.size(); ++i) {
    keep[i].assign(installations[i].users.size(), false);
  }
  // Oldest first, as claims are ordered (api/claims.h: namespace/name
  // breaks ties), so every replica agrees.
  std::vector<api::ClaimAge> ages;
  ages.reserve(installations.size());
  for (const auto& inst : installations) {
    ages.push_back({inst.created, {std::string(inst.ns), std::string(inst.name)}});
  }
  std::vector<size_t> order(installations.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return api::KeepsClaim(ages[a], ages[b]); });

  size_t total = limits.fixed_bytes;
  std::vector<bool> started(installations.size(), false);
  auto admit = [&](size_t i, size_t k, size_t cap) {
    const size_t cost =
        installations[i].users[k].bytes + (started[i] ? 0 : installations[i].block_bytes);
    if (total + cost > cap) return false;
    total += cost;
    started[i] = true;
    keep[i][k] = true;
    return true;
  };
  auto in_file = [&](size_t i) {
    const auto& users = installations[i].users;
    return std::any_of(users.begin(), users.end(), [](const FitUser& u) { return u.in_file; });
  };

  // What is rendered stays (it only grows when a rendered installation's
  // lines grow, e.g. a prefix change).
  for (size_t i : order) {
    for (size_t k = 0; k < installations[i].users.size(); ++k) {
      if (installations[i].users[k].in_file) admit(i, k, limits.max_bytes);
    }
  }
  // Rotations of rendered installations may use the reserve.
  for (size_t i : order) {
    if (!in_file(i)) continue;
    for (size_t k = 0; k < installations[i].users.size(); ++k) {
      if (!installations[i].users[k].in_file) admit(i, k, limits.max_bytes);
    }
  }
  // New installations, whole, oldest first, below the reserve. Once one
  // does not fit, the newer ones wait too: the newest are left out.
  const size_t cap =
      limits.max_bytes > limits.reserve_bytes ? limits.max_bytes - limits.reserve_bytes : 0;
  for (size_t i : order) {
    if (in_file(i)) continue;
    const auto& inst = installations[i];
    size_t cost = inst.block_bytes;
    for (const auto& u : inst.users) cost += u.bytes;
    if (total + cost > cap) break;
    total += cost;
    started[i] = true;
    keep[i].assign(inst.users.size(), true);
  }
  return keep;
}

}  // namespace switchboard::operator_logic::internal
