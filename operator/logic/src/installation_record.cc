#include "switchboard/operator_logic/installation_record.h"

#include <algorithm>

#include "switchboard/api/claims.h"
#include "switchboard/api/limits.h"
#include "switchboard/api/metadata.h"
#include "switchboard/api/names.h"
#include "switchboard/operator_logic/cluster_render.h"
#include "switchboard/operator_logic/objects.h"

namespace switchboard::operator_logic {
namespace {

bool SameState(const std::shared_ptr<const CredentialState>& a,
               const std::shared_ptr<const CredentialState>& b) {
  if (a == b) return true;
  return a != nullptr && b != nullptr && *a == *b;
}

}  // namespace

bool CredentialsSecretFacts::operator==(const CredentialsSecretFacts& other) const {
  return managed == other.managed && owner_uids == other.owner_uids && conflict == other.conflict &&
         SameState(state, other.state) && problem == other.problem;
}

bool InstallationRecord::operator==(const InstallationRecord& other) const {
  return ns == other.ns && name == other.name && uid == other.uid && created == other.created &&
         server == other.server && subject_prefix == other.subject_prefix &&
         deleting == other.deleting && limits == other.limits &&
         SameState(credentials, other.credentials) && skipped == other.skipped;
}

CredentialsSecretFacts CredentialsSecretFactsOf(const nlohmann::json& secret) {
  CredentialsSecretFacts f;
  if (!secret.is_object()) return f;
  // CheckOwnership's reading of the label and the owners, kept as facts so
  // that a new backend uid is checked without the object.
  if (auto meta = secret.find("metadata"); meta != secret.end() && meta->is_object()) {
    if (auto labels = meta->find("labels"); labels != meta->end() && labels->is_object()) {
      auto l = labels->find(kManagedByLabel);
      f.managed = l != labels->end() && l->is_string() &&
                  l->get_ref<const std::string&>() == kManagedByValue;
    }
    if (auto refs = meta->find("ownerReferences"); refs != meta->end() && refs->is_array()) {
      for (const auto& ref : *refs) {
        if (!ref.is_object()) continue;
        auto uid = ref.find("uid");
        if (uid != ref.end() && uid->is_string()) f.owner_uids.push_back(uid->get<std::string>());
      }
    }
  }
  f.conflict = api::HasAnnotation(secret, kSecretConflictAnnotation);
  auto data = DecodeSecretData(secret);
  if (!data.ok()) {
    f.problem = data.status().message();
    return f;
  }
  auto state = DecodeState(*data);
  if (!state.ok()) {
    f.problem = state.status().message();
    return f;
  }
  f.state = std::make_shared<const CredentialState>(std::move(state).value());
  return f;
}

InstallationRecord RecordOf(const nlohmann::json& backend, const CredentialsSecretFacts* secret) {
  api::BackendView bv(backend);
  InstallationRecord r;
  r.ns = bv.ns();
  r.name = bv.name();
  r.uid = api::UidOf(backend);
  r.created = api::CreationTimeOf(backend);
  r.server = bv.bound_server();
  r.deleting = api::IsDeleting(backend);
  if (r.server) {
    r.subject_prefix = bv.subject_prefix();
    r.limits = bv.limits();
  }
  AttachCredentials(r, secret);
  return r;
}

void AttachCredentials(InstallationRecord& r, const CredentialsSecretFacts* secret) {
  r.credentials = nullptr;
  r.skipped.clear();
  if (secret == nullptr) {
    r.skipped = "no credentials Secret yet";
    return;
  }
  const bool owned = secret->managed && !r.uid.empty() &&
                     std::find(secret->owner_uids.begin(), secret->owner_uids.end(), r.uid) !=
                         secret->owner_uids.end();
  if (!owned) {
    r.skipped = "Secret " + api::DefaultCredentialsSecretName(r.name) + " is not owned by it";
    return;
  }
  if (secret->conflict) {
    r.skipped = "SecretConflict";
    return;
  }
  if (!secret->state) {
    r.skipped = secret->problem;
    return;
  }
  r.credentials = secret->state;
}

std::optional<std::string> BackendOfCredentialsSecret(std::string_view secret_name) {
  if (!secret_name.ends_with(api::kCredentialsSecretSuffix) ||
      secret_name.size() == api::kCredentialsSecretSuffix.size()) {
    return std::nullopt;
  }
  return std::string(
      secret_name.substr(0, secret_name.size() - api::kCredentialsSecretSuffix.size()));
}

}  // namespace switchboard::operator_logic
