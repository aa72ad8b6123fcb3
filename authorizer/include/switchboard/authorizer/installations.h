// What the authorizer keeps of the cluster's backends and managed Secrets:
// one operator_logic::InstallationRecord per backend (its credentials
// Secret decoded once, when it or the backend changes) and each callout
// Secret decoded (CalloutSecret), in maps fed by the watchers' events
// (kube::WatcherOptions::stream_list). A rebuild reads the records; no
// Secret is decoded again. Env and config Secrets keep nothing.
//
// The event steps are the cache's only writers; every call is
// thread-safe (one watcher per namespace may call at once).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/authorizer/served.h"
#include "switchboard/kube/field_mask.h"
#include "switchboard/kube/watcher.h"
#include "switchboard/operator_logic/installation_record.h"

namespace switchboard::authorizer {

class InstallationCache {
 public:
  using RecordPtr = std::shared_ptr<const operator_logic::InstallationRecord>;

  // One event of a PubSubBackend watcher / a managed-Secret watcher (with
  // stream_list: a relist is kApplied events, then a kRestarted with the
  // listed keys), whose namespace is `scope` ("" for all). True when what
  // a decision reads changed: a record or a callout Secret is new, gone or
  // different (a backend's status or an env Secret changes nothing).
  bool OnBackendEvent(const kube::WatcherEvent& ev, std::string_view scope);
  bool OnSecretEvent(const kube::WatcherEvent& ev, std::string_view scope);

  // Every record, by namespace/name; shared, immutable snapshots.
  std::vector<RecordPtr> Records() const;
  // The callout Secret ns/name decoded; null when there is none.
  std::shared_ptr<const CalloutSecret> Callout(std::string_view ns, std::string_view name) const;
  size_t backends() const;
  size_t secrets() const;  // credentials and callout Secrets kept

 private:
  bool ApplyBackend(const nlohmann::json& backend);
  bool RemoveBackend(const std::string& key);
  bool ApplySecret(const nlohmann::json& secret);
  bool RemoveSecret(const std::string& ns, const std::string& name);
  // Re-attaches the credentials of backend `key` (ns/name) to its record.
  bool Reattach(const std::string& key);

  mutable std::mutex mu_;
  std::map<std::string, RecordPtr, std::less<>> records_;  // backend ns/name; guarded by mu_
  // Credentials Secrets by their backend's ns/name; guarded by mu_.
  std::map<std::string, std::shared_ptr<const operator_logic::CredentialsSecretFacts>, std::less<>>
      credentials_;
  // Callout Secrets by ns/name; guarded by mu_.
  std::map<std::string, std::shared_ptr<const CalloutSecret>, std::less<>> callouts_;
};

// What the watchers parse of each object at all (kube::WatcherOptions::
// parse_keep): what RecordOf, CredentialsSecretFactsOf and CalloutSecretOf
// read (a Secret's owners' kinds tell a backend's env Secret from a
// server's), and of a NatsServer its metadata and spec. InstallationCacheTest
// requires a masked parse to give the same served server as the whole
// object.
kube::FieldMask BackendFields();
kube::FieldMask ServerFields();
kube::FieldMask SecretFields();

}  // namespace switchboard::authorizer
