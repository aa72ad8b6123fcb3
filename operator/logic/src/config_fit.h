// The size ceiling of a rendered file: which users stay when everything
// would not fit. Private to the render (render.h describes the policy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace switchboard::operator_logic::internal {

struct FitUser {
  size_t bytes = 0;      // its line in the file
  bool in_file = false;  // the file as it is now holds it
};

struct FitInstallation {
  std::optional<int64_t> created;  // Unix seconds; nullopt: newest (api/claims.h)
  std::string_view ns, name;
  size_t block_bytes = 0;  // its lines other than the users' (comment, account braces)
  std::vector<FitUser> users;
};

struct FitLimits {
  size_t fixed_bytes = 0;  // the file's lines that are there whatever is rendered
  size_t max_bytes = 0;
  size_t reserve_bytes = 0;  // of max_bytes, only for installations already in the file
};

// keep[i][k]: whether user k of installation i stays. Users in the file
// come first, then new users of installations in the file, then new
// installations oldest first while they fit below max - reserve (the first
// that does not fit ends it). The kept lines plus fixed_bytes never exceed
// max_bytes.
std::vector<std::vector<bool>> FitToLimit(const std::vector<FitInstallation>& installations,
                                          const FitLimits& limits);

}  // namespace switchboard::operator_logic::internal
