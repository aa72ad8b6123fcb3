// Writing the Secrets the operator owns, from objects operator/logic built
// (secrets.h), against what the label-selected cache holds. Never touches a
// Secret someone else owns; writes nothing when nothing changed.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "k8s_util.h"
#include "switchboard/common/status.h"
#include "switchboard/kube/client.h"

namespace switchboard::operator_controller {

// Secrets this process created in the last few seconds. The informer sees
// a create a moment after it succeeded, and every write also wakes the
// owner (its watch event): without this, the owner's next reconcile would
// find nothing in the cache and POST again (a 409 and a GET, each an API
// round trip). Holds each create as its serialized bytes (not a JSON DOM)
// and only for `kKeep`: after a burst of 2,000 creates it must not stay a
// second copy of the Secrets cache. Thread-safe.
class RecentWrites {
 public:
  static constexpr std::chrono::seconds kKeep{10};
  void Created(const std::string& key, const json& desired);
  // True when `key` was created within kKeep with exactly `desired`.
  bool Fresh(const std::string& key, const json& desired);
  // Drops the creates older than kKeep. Created and Fresh prune too, but
  // after a burst neither may be called again for hours: the operator's
  // housekeeping loop calls this, so the burst's bytes do not stay.
  void Prune(std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());
  size_t Size();

 private:
  void PruneLocked(std::chrono::steady_clock::time_point now);  // needs mu_
  std::mutex mu_;
  // key -> (when, desired.dump()); guarded by mu_
  std::map<std::string, std::pair<std::chrono::steady_clock::time_point, std::string>> created_;
};

// Makes Secret desired.metadata.{namespace,name} equal `desired` (data,
// labels, annotations, ownerReferences). `cached` is the object from the
// owned-Secrets cache, null when the cache has none.
//   - cached null: POST. AlreadyExists means it exists without our label
//     (or the cache lags): it is read once, and if it is not owned by
//     `owner_uid` the result is kFailedPrecondition with a message naming
//     the Secret and the fix (SecretConflict).
//   - cached, not owned by owner_uid: kFailedPrecondition.
//   - cached and owned: nothing when equal; else one merge patch (keys the
//     desired object lacks are removed: older layouts converge).
// Returns whether it wrote.
// `recent` (may be null) skips a create this process just made.
Result<bool> WriteOwnedSecret(kube::Client* client, const json& desired, const json* cached,
                              const std::string& owner_uid, RecentWrites* recent = nullptr);

// GET that maps NotFound to a null json (for Secrets a user references:
// they are not in the owned-Secrets cache).
Result<json> GetSecretOrNull(kube::Client* client, const std::string& ns, const std::string& name);

// Deletes `cached` (may be null) when it is owned by `owner_uid`, with a uid
// precondition; others are left alone.
Status DeleteOwnedSecret(kube::Client* client, const json* cached, const std::string& owner_uid);

}  // namespace switchboard::operator_controller
