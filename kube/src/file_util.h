// Small file helpers for config loading.
#pragma once

#include <string>

#include "switchboard/common/status.h"

namespace switchboard::kube::internal {

// Whole file; kNotFound / kPermissionDenied naming `what` and the path.
Result<std::string> ReadWholeFile(const std::string& path, const std::string& what);

}  // namespace switchboard::kube::internal
