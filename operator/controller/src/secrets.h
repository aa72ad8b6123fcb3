// Writing Secrets the operator owns: create, or update only when the data
// (or our labels/owner) differ; never touch a Secret someone else owns.
#pragma once

#include <string>

#include "k8s_util.h"
#include "switchboard/common/status.h"
#include "switchboard/kube/client.h"

namespace switchboard::controller {

struct SecretWrite {
  bool wrote = false;  // created or updated
  json secret;         // the stored object afterwards
};

// Ensures Secret ns/name holds exactly `data`, labelled managed-by=switchboard
// and owned by `owner`. A Secret that exists without an ownerReference to
// `owner` gives kFailedPrecondition with a message naming it and the fix
// (the caller reports SecretConflict). `existing` (optional) is a GET result
// the caller already has.
Result<SecretWrite> EnsureOwnedSecret(kube::Client* client, const json& owner,
                                      const std::string& ns, const std::string& name,
                                      const SecretData& data, const json* existing = nullptr);

// GET that maps NotFound to a null json (other errors are returned).
Result<json> GetSecretOrNull(kube::Client* client, const std::string& ns, const std::string& name);

// Deletes the Secret when it is owned by `owner_uid` (others are left alone).
Status DeleteOwnedSecret(kube::Client* client, const std::string& ns, const std::string& name,
                         const std::string& owner_uid);

}  // namespace switchboard::controller
