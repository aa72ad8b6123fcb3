// Which installations, and which of their users, a NatsServer serves: the
// values a config file can carry and the claims of api/claims.h (of two
// installations with one user name or prefix, the older keeps it). One
// decision for the include file (render.cc) and the callout directory
// (callout.cc), so both modes let in the same users. Private.
#pragma once

#include <cstddef>
#include <vector>

#include "switchboard/operator_logic/render.h"

namespace switchboard::operator_logic::internal {

// An accepted installation and its range of kept users.
struct AcceptedInstallation {
  const Installation* inst;
  size_t begin, end;  // into Acceptance::kept_users
};

struct Acceptance {
  std::vector<AcceptedInstallation> accepted;  // namespace/name order
  std::vector<const NatsUser*> kept_users;     // point into the input
  std::vector<Rejected> rejected;              // namespace/name order; reason kRenderRejected
  int unique = 0;                              // distinct namespace/names in the input
};

// Pointers into `installations`, which must outlive the result.
Acceptance AcceptInstallations(const std::vector<Installation>& installations);

}  // namespace switchboard::operator_logic::internal
