#include "secret_io.h"

#include "switchboard/api/metadata.h"
#include "switchboard/operator_logic/objects.h"

namespace switchboard::operator_controller {
namespace logic = ::switchboard::operator_logic;

namespace {

const json& Field(const json& obj, const char* a, const char* b = nullptr) {
  static const json kNull;
  auto x = obj.find(a);
  if (x == obj.end()) return kNull;
  if (b == nullptr) return *x;
  auto y = x->find(b);
  return y == x->end() ? kNull : *y;
}

using api::NameOf;
using api::NamespaceOf;

// Labels/annotations of `desired` are a subset of `current`'s (others may
// add their own; we only care about ours).
bool SubsetOf(const json& desired, const json& current) {
  if (!desired.is_object()) return true;
  if (!current.is_object()) return desired.empty();
  for (auto it = desired.begin(); it != desired.end(); ++it) {
    auto c = current.find(it.key());
    if (c == current.end() || *c != it.value()) return false;
  }
  return true;
}

Status Conflict(const json& desired) {
  return Status::FailedPrecondition(
      logic::ForeignSecretMessage(NamespaceOf(desired), NameOf(desired)));
}

Result<bool> Patch(kube::Client* client, const json& desired, const json& current) {
  const json& want_data = Field(desired, "data");
  const json& current_data = Field(current, "data");
  const json have_data = current_data.is_object() ? current_data : json::object();
  const bool same =
      have_data == want_data &&
      SubsetOf(Field(desired, "metadata", "labels"), Field(current, "metadata", "labels")) &&
      SubsetOf(Field(desired, "metadata", "annotations"),
               Field(current, "metadata", "annotations"));
  if (same) return false;
  json data = want_data.is_object() ? want_data : json::object();
  if (have_data.is_object()) {
    for (auto it = have_data.begin(); it != have_data.end(); ++it) {
      if (!data.contains(it.key())) data[it.key()] = nullptr;
    }
  }
  json meta = json::object();
  if (desired["metadata"].contains("labels")) meta["labels"] = desired["metadata"]["labels"];
  if (desired["metadata"].contains("annotations")) {
    meta["annotations"] = desired["metadata"]["annotations"];
  }
  // Annotations we used to set and no longer want (the conflict mark).
  const json& have_ann = Field(current, "metadata", "annotations");
  if (have_ann.is_object()) {
    for (auto it = have_ann.begin(); it != have_ann.end(); ++it) {
      if (it.key().rfind("pubsub.switchboard.dev/", 0) == 0 &&
          !(meta.contains("annotations") && meta["annotations"].contains(it.key()))) {
        meta["annotations"][it.key()] = nullptr;
      }
    }
  }
  json patch = {{"metadata", meta}, {"data", data}};
  auto r = client->Patch(kube::resources::Secret(), NamespaceOf(desired), NameOf(desired),
                         kube::PatchType::kMerge, patch);
  if (!r.ok()) return r.status();
  return true;
}

}  // namespace

void RecentWrites::PruneLocked(std::chrono::steady_clock::time_point now) {
  for (auto it = created_.begin(); it != created_.end();) {
    it = now - it->second.first >= kKeep ? created_.erase(it) : std::next(it);
  }
}

void RecentWrites::Prune(std::chrono::steady_clock::time_point now) {
  std::lock_guard lock(mu_);
  PruneLocked(now);
}

size_t RecentWrites::Size() {
  std::lock_guard lock(mu_);
  return created_.size();
}

void RecentWrites::Created(const std::string& key, const json& desired) {
  std::lock_guard lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  PruneLocked(now);
  created_[key] = {now, desired.dump()};
}

bool RecentWrites::Fresh(const std::string& key, const json& desired) {
  std::lock_guard lock(mu_);
  PruneLocked(std::chrono::steady_clock::now());
  auto it = created_.find(key);
  return it != created_.end() && it->second.second == desired.dump();
}

Result<json> GetSecretOrNull(kube::Client* client, const std::string& ns, const std::string& name) {
  auto s = client->Get(kube::resources::Secret(), ns, name);
  if (s.ok()) return std::move(s).value();
  if (s.status().code() == StatusCode::kNotFound) return json(nullptr);
  return s.status();
}

Result<bool> WriteOwnedSecret(kube::Client* client, const json& desired, const json* cached,
                              const std::string& owner_uid, RecentWrites* recent) {
  const std::string key = NamespaceOf(desired) + "/" + NameOf(desired);
  if (cached == nullptr && recent != nullptr && recent->Fresh(key, desired)) return false;
  if (cached != nullptr) {
    if (logic::CheckOwnership(*cached, owner_uid) != logic::Ownership::kOwned) {
      return Conflict(desired);
    }
    return Patch(client, desired, *cached);
  }
  auto created = client->Create(kube::resources::Secret(), desired);
  if (created.ok()) {
    if (recent != nullptr) recent->Created(key, desired);
    return true;
  }
  if (created.status().code() != StatusCode::kAlreadyExists) return created.status();
  auto got = GetSecretOrNull(client, NamespaceOf(desired), NameOf(desired));
  if (!got.ok()) return got.status();
  if (got->is_null())
    return Status::Unavailable("Secret " + NameOf(desired) + " vanished; retrying");
  if (logic::CheckOwnership(*got, owner_uid) != logic::Ownership::kOwned) return Conflict(desired);
  return Patch(client, desired, *got);
}

Status DeleteOwnedSecret(kube::Client* client, const json* cached, const std::string& owner_uid) {
  if (cached == nullptr || logic::CheckOwnership(*cached, owner_uid) != logic::Ownership::kOwned) {
    return Status::Ok();
  }
  kube::DeleteOptions opts;
  opts.precondition_uid = UidOf(*cached);
  auto del = client->Delete(kube::resources::Secret(), NamespaceOf(*cached), NameOf(*cached), opts);
  if (!del.ok() && del.status().code() != StatusCode::kNotFound) return del.status();
  return Status::Ok();
}

}  // namespace switchboard::operator_controller
