#include "secrets.h"

namespace switchboard::controller {

Result<json> GetSecretOrNull(kube::Client* client, const std::string& ns, const std::string& name) {
  auto s = client->Get(kube::resources::Secret(), ns, name);
  if (s.ok()) return std::move(s).value();
  if (s.status().code() == StatusCode::kNotFound) return json(nullptr);
  return s.status();
}

Result<SecretWrite> EnsureOwnedSecret(kube::Client* client, const json& owner,
                                      const std::string& ns, const std::string& name,
                                      const SecretData& data, const json* existing) {
  json current;
  if (existing) {
    current = *existing;
  } else {
    auto got = GetSecretOrNull(client, ns, name);
    if (!got.ok()) return got.status();
    current = std::move(got).value();
  }
  const std::string uid = owner["metadata"].value("uid", "");
  json encoded = EncodeSecretData(data);
  if (current.is_null()) {
    json obj = {{"apiVersion", "v1"},
                {"kind", "Secret"},
                {"metadata",
                 {{"name", name},
                  {"namespace", ns},
                  {"labels", {{kManagedByLabel, kManagedByValue}}},
                  {"ownerReferences", json::array({OwnerReference(owner)})}}},
                {"type", "Opaque"},
                {"data", encoded}};
    auto created = client->Create(kube::resources::Secret(), obj);
    if (!created.ok()) return created.status();
    return SecretWrite{true, std::move(created).value()};
  }
  if (!IsOwnedBy(current, uid)) {
    return Status::FailedPrecondition(
        "Secret " + ns + "/" + name + " exists and is not owned by " + owner.value("kind", "") +
        " " + ns + "/" + owner["metadata"].value("name", "") +
        "; delete or rename it, or choose another name (spec.output.secretName)");
  }
  const json& cur_data = current.contains("data") ? current["data"] : json::object();
  if (cur_data == encoded && IsManagedBySwitchboard(current)) {
    return SecretWrite{false, current};
  }
  json updated = current;
  updated["data"] = encoded;
  updated["metadata"]["labels"][kManagedByLabel] = kManagedByValue;
  updated.erase("stringData");
  auto out = client->Update(kube::resources::Secret(), updated);
  if (!out.ok()) return out.status();
  return SecretWrite{true, std::move(out).value()};
}

Status DeleteOwnedSecret(kube::Client* client, const std::string& ns, const std::string& name,
                         const std::string& owner_uid) {
  auto got = GetSecretOrNull(client, ns, name);
  if (!got.ok()) return got.status();
  if (got->is_null() || !IsOwnedBy(*got, owner_uid)) return Status::Ok();
  kube::DeleteOptions opts;
  opts.precondition_uid = (*got)["metadata"].value("uid", "");
  auto del = client->Delete(kube::resources::Secret(), ns, name, opts);
  if (!del.ok() && del.status().code() != StatusCode::kNotFound) return del.status();
  return Status::Ok();
}

}  // namespace switchboard::controller
