// The backends a NatsServer serves, with their stored credentials: one
// selection for the include file (CollectInstallations) and the callout
// directory (CollectDirectory). Private; cluster_render.h describes the
// rules.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "switchboard/api/views.h"
#include "switchboard/operator_logic/cluster_render.h"
#include "switchboard/operator_logic/limits.h"
#include "switchboard/operator_logic/rotation.h"

namespace switchboard::operator_logic::internal {

struct SelectedBackend {
  std::string ns, name, subject_prefix;
  std::optional<int64_t> created;  // api::CreationTimeOf
  CredentialState state;
  // The limits NATS applies to its account (InstallationLimitsOf): none
  // unless the server isolates installations in accounts.
  InstallationLimits limits = {};
};

// Bound to `server`, not being deleted, namespace admitted, owned
// credentials Secret that decodes and is not marked SecretConflict. Every
// other backend bound to it gets a line in `skipped`.
std::vector<SelectedBackend> SelectBackends(const api::NatsServerView& server,
                                            const BackendSource& backends,
                                            const SecretLookup& secret,
                                            std::vector<std::string>& skipped);

}  // namespace switchboard::operator_logic::internal
