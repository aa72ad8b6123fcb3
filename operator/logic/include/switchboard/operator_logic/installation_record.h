// One installation (a PubSubBackend and its credentials Secret) as the
// decisions read it: a typed record, computed once when the backend or its
// credentials Secret changes, instead of the objects read (and the Secret
// decoded) again by every render or directory build. Pure.
//
// The render's selection (CollectInstallations), the callout directory
// (CollectDirectory) and the authorizer's caches read these records; the
// overloads of those that take objects compute the records first, so there
// is one selection, over records.
//
// What is read of the objects, and nothing more:
//   backend: metadata.{namespace, name, uid, creationTimestamp,
//            deletionTimestamp}, spec.kind, spec.nats.{serverRef,
//            subjectPrefix, limits};
//   credentials Secret (`<backend>-nats-credentials`): the managed-by label,
//            the owner references' uids, the SecretConflict annotation and
//            the data (DecodeSecretData, DecodeState).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "switchboard/api/views.h"
#include "switchboard/operator_logic/limits.h"
#include "switchboard/operator_logic/rotation.h"

namespace switchboard::operator_logic {

// What a credentials Secret contributes to its backend's record, decoded
// once. The state is shared (not copied) by the records that point at it.
struct CredentialsSecretFacts {
  bool managed = false;                 // kManagedByLabel = kManagedByValue
  std::vector<std::string> owner_uids;  // metadata.ownerReferences[].uid
  bool conflict = false;                // kSecretConflictAnnotation is set
  // DecodeState of DecodeSecretData; null with `problem` when either fails.
  std::shared_ptr<const CredentialState> state;
  std::string problem;  // the decoder's message; never a value
  bool operator==(const CredentialsSecretFacts& other) const;
};
CredentialsSecretFacts CredentialsSecretFactsOf(const nlohmann::json& secret);

struct InstallationRecord {
  std::string ns, name, uid;
  std::optional<int64_t> created;        // api::CreationTimeOf
  std::optional<api::ObjectKey> server;  // api::BackendView::bound_server
  std::string subject_prefix;            // defaulted (BackendView)
  bool deleting = false;                 // metadata.deletionTimestamp
  // spec.nats.limits as written (BackendView::limits): the server's policy
  // applies at selection (InstallationLimitsOf).
  InstallationLimits limits;
  // The decoded credential state when its credentials Secret is there,
  // owned by this backend (CheckOwnership), not in SecretConflict and
  // decodes; otherwise null and `skipped` says why ("no credentials Secret
  // yet", "Secret <name> is not owned by it", "SecretConflict", the
  // decoder's message).
  std::shared_ptr<const CredentialState> credentials;
  std::string skipped;

  std::string key() const { return ns + "/" + name; }
  bool operator==(const InstallationRecord& other) const;
};

// The backend's part of its record; `secret` is its credentials Secret's
// facts (null: none yet). Only the installation's own objects are read:
// the server's side (admission, limits policy) is applied at selection.
InstallationRecord RecordOf(const nlohmann::json& backend, const CredentialsSecretFacts* secret);
// The same record with another credentials Secret (null: none): what a
// change of the Secret alone recomputes.
void AttachCredentials(InstallationRecord& record, const CredentialsSecretFacts* secret);

// Of the managed Secrets: whether `name` is a credentials Secret's
// (`<backend>-nats-credentials`), and then the backend's name.
std::optional<std::string> BackendOfCredentialsSecret(std::string_view secret_name);

}  // namespace switchboard::operator_logic
