#include "switchboard/authorizer/installations.h"

#include <set>

#include "switchboard/api/metadata.h"
#include "switchboard/api/names.h"
#include "switchboard/operator_logic/cluster_render.h"
#include "switchboard/operator_logic/objects.h"

namespace switchboard::authorizer {
namespace {

namespace logic = operator_logic;
using nlohmann::json;

std::string Key(std::string_view ns, std::string_view name) {
  std::string k;
  k.reserve(ns.size() + 1 + name.size());
  k.append(ns).append("/").append(name);
  return k;
}

bool InScope(std::string_view key, std::string_view scope) {
  return scope.empty() ||
         (key.size() > scope.size() && key.starts_with(scope) && key[scope.size()] == '/');
}

// An env Secret is owned by its PubSubBackend; a callout Secret by its
// NatsServer (or, made by hand, by nothing): the Secrets of the second
// kind are read as callout Secrets, whatever their name
// (spec.provisioning.authCallout.secretName).
bool OwnedByABackend(const json& secret) {
  auto meta = secret.find("metadata");
  if (meta == secret.end() || !meta->is_object()) return false;
  auto refs = meta->find("ownerReferences");
  if (refs == meta->end() || !refs->is_array()) return false;
  for (const auto& ref : *refs) {
    if (ref.is_object() && ref.value("kind", "") == "PubSubBackend") return true;
  }
  return false;
}

}  // namespace

bool InstallationCache::OnBackendEvent(const kube::WatcherEvent& ev, std::string_view scope) {
  switch (ev.type) {
    case kube::WatcherEvent::Type::kApplied:
      return ApplyBackend(ev.object);
    case kube::WatcherEvent::Type::kDeleted:
      return RemoveBackend(kube::ObjectKeyOf(ev.object));
    case kube::WatcherEvent::Type::kRestarted: {
      bool changed = false;
      for (const json& o : ev.objects) changed = ApplyBackend(o) || changed;
      std::set<std::string, std::less<>> listed(ev.listed.begin(), ev.listed.end());
      for (const json& o : ev.objects) listed.insert(kube::ObjectKeyOf(o));
      std::vector<std::string> gone;
      {
        std::lock_guard lock(mu_);
        for (const auto& [key, r] : records_) {
          if (InScope(key, scope) && !listed.contains(key)) gone.push_back(key);
        }
      }
      for (const auto& key : gone) changed = RemoveBackend(key) || changed;
      return changed;
    }
    case kube::WatcherEvent::Type::kError:
      return false;
  }
  return false;
}

bool InstallationCache::OnSecretEvent(const kube::WatcherEvent& ev, std::string_view scope) {
  switch (ev.type) {
    case kube::WatcherEvent::Type::kApplied:
      return ApplySecret(ev.object);
    case kube::WatcherEvent::Type::kDeleted:
      return RemoveSecret(api::NamespaceOf(ev.object), api::NameOf(ev.object));
    case kube::WatcherEvent::Type::kRestarted: {
      bool changed = false;
      for (const json& o : ev.objects) changed = ApplySecret(o) || changed;
      std::set<std::string, std::less<>> listed(ev.listed.begin(), ev.listed.end());
      for (const json& o : ev.objects) listed.insert(kube::ObjectKeyOf(o));
      std::vector<std::pair<std::string, std::string>> gone;  // ns, name
      {
        std::lock_guard lock(mu_);
        for (const auto& [backend, facts] : credentials_) {
          const size_t slash = backend.find('/');
          const std::string ns = backend.substr(0, slash);
          const std::string name = api::DefaultCredentialsSecretName(backend.substr(slash + 1));
          const std::string key = Key(ns, name);
          if (InScope(key, scope) && !listed.contains(key)) gone.emplace_back(ns, name);
        }
        for (const auto& [key, c] : callouts_) {
          if (InScope(key, scope) && !listed.contains(key)) {
            const size_t slash = key.find('/');
            gone.emplace_back(key.substr(0, slash), key.substr(slash + 1));
          }
        }
      }
      for (const auto& [ns, name] : gone) changed = RemoveSecret(ns, name) || changed;
      return changed;
    }
    case kube::WatcherEvent::Type::kError:
      return false;
  }
  return false;
}

bool InstallationCache::ApplyBackend(const json& backend) {
  const std::string key = kube::ObjectKeyOf(backend);
  std::lock_guard lock(mu_);
  auto facts = credentials_.find(key);
  auto record = std::make_shared<const logic::InstallationRecord>(
      logic::RecordOf(backend, facts == credentials_.end() ? nullptr : facts->second.get()));
  auto [it, added] = records_.try_emplace(key, record);
  if (added) return true;
  if (*it->second == *record) return false;
  it->second = std::move(record);
  return true;
}

bool InstallationCache::RemoveBackend(const std::string& key) {
  std::lock_guard lock(mu_);
  return records_.erase(key) > 0;
}

bool InstallationCache::Reattach(const std::string& key) {
  auto it = records_.find(key);
  if (it == records_.end()) return false;
  auto facts = credentials_.find(key);
  logic::InstallationRecord next = *it->second;
  logic::AttachCredentials(next, facts == credentials_.end() ? nullptr : facts->second.get());
  if (next == *it->second) return false;
  it->second = std::make_shared<const logic::InstallationRecord>(std::move(next));
  return true;
}

bool InstallationCache::ApplySecret(const json& secret) {
  const std::string ns = api::NamespaceOf(secret), name = api::NameOf(secret);
  if (auto backend = logic::BackendOfCredentialsSecret(name)) {
    const std::string key = Key(ns, *backend);
    auto facts = std::make_shared<const logic::CredentialsSecretFacts>(
        logic::CredentialsSecretFactsOf(secret));
    std::lock_guard lock(mu_);
    auto [it, added] = credentials_.try_emplace(key, facts);
    if (!added) {
      if (*it->second == *facts) return false;
      it->second = std::move(facts);
    }
    // A Secret with no backend yet changes nothing served; the record that
    // comes with its backend reads it.
    return Reattach(key);
  }
  if (OwnedByABackend(secret)) return RemoveSecret(ns, name);  // an env Secret
  auto callout = std::make_shared<const CalloutSecret>(CalloutSecretOf(secret));
  std::lock_guard lock(mu_);
  auto [it, added] = callouts_.try_emplace(Key(ns, name), callout);
  if (added) return true;
  if (*it->second == *callout) return false;
  it->second = std::move(callout);
  return true;
}

bool InstallationCache::RemoveSecret(const std::string& ns, const std::string& name) {
  std::lock_guard lock(mu_);
  if (auto backend = logic::BackendOfCredentialsSecret(name)) {
    const std::string key = Key(ns, *backend);
    if (credentials_.erase(key) == 0) return false;
    return Reattach(key);
  }
  return callouts_.erase(Key(ns, name)) > 0;
}

std::vector<InstallationCache::RecordPtr> InstallationCache::Records() const {
  std::lock_guard lock(mu_);
  std::vector<RecordPtr> out;
  out.reserve(records_.size());
  for (const auto& [key, r] : records_) out.push_back(r);
  return out;
}

std::shared_ptr<const CalloutSecret> InstallationCache::Callout(std::string_view ns,
                                                                std::string_view name) const {
  std::lock_guard lock(mu_);
  auto it = callouts_.find(Key(ns, name));
  return it == callouts_.end() ? nullptr : it->second;
}

size_t InstallationCache::backends() const {
  std::lock_guard lock(mu_);
  return records_.size();
}

size_t InstallationCache::secrets() const {
  std::lock_guard lock(mu_);
  return credentials_.size() + callouts_.size();
}

kube::FieldMask BackendFields() {
  return kube::FieldMask::Keep({{"metadata", "name"},
                                {"metadata", "namespace"},
                                {"metadata", "uid"},
                                {"metadata", "resourceVersion"},
                                {"metadata", "creationTimestamp"},
                                {"metadata", "deletionTimestamp"},
                                {"spec", "kind"},
                                {"spec", "nats", "serverRef", "name"},
                                {"spec", "nats", "serverRef", "namespace"},
                                {"spec", "nats", "subjectPrefix"},
                                {"spec", "nats", "limits"}});
}

kube::FieldMask ServerFields() {
  return kube::FieldMask::Keep({{"metadata", "name"},
                                {"metadata", "namespace"},
                                {"metadata", "uid"},
                                {"metadata", "resourceVersion"},
                                {"spec"}});
}

kube::FieldMask SecretFields() {
  return kube::FieldMask::Keep(
      {{"metadata", "name"},
       {"metadata", "namespace"},
       {"metadata", "resourceVersion"},
       {"metadata", "labels", std::string(operator_logic::kManagedByLabel)},
       {"metadata", "annotations", std::string(operator_logic::kSecretConflictAnnotation)},
       {"metadata", "ownerReferences", "uid"},
       {"metadata", "ownerReferences", "kind"},
       {"data"}});
}

}  // namespace switchboard::authorizer
