#include "switchboard/kube/cache_shapes.h"

#include <initializer_list>
#include <string_view>

#include "switchboard/api/packed.h"

namespace switchboard::kube {
namespace {

// Removes every member of `obj` not named in `keep`.
void KeepOnly(json& obj, std::initializer_list<std::string_view> keep) {
  if (!obj.is_object()) return;
  for (auto it = obj.begin(); it != obj.end();) {
    bool wanted = false;
    for (auto k : keep) wanted = wanted || it.key() == k;
    it = wanted ? std::next(it) : obj.erase(it);
  }
}

void KeepMetadata(json& obj, std::initializer_list<std::string_view> keep) {
  auto meta = obj.find("metadata");
  if (meta != obj.end()) KeepOnly(*meta, keep);
}

}  // namespace

void CompactOwnedSecret(json& secret) {
  KeepOnly(secret, {"metadata", "data"});
  KeepMetadata(secret, {"name", "namespace", "uid", "resourceVersion", "labels", "annotations",
                        "ownerReferences", "deletionTimestamp"});
  if (!secret.is_object()) return;
  auto data = secret.find("data");
  if (data != secret.end() && data->is_object()) *data = api::Pack(*data);
  auto meta = secret.find("metadata");
  if (meta == secret.end() || !meta->is_object()) return;
  auto refs = meta->find("ownerReferences");
  if (refs == meta->end() || !refs->is_array()) return;
  for (auto& ref : *refs) KeepOnly(ref, {"kind", "name", "uid"});
}

void CompactCustomObject(json& object) {
  KeepOnly(object, {"apiVersion", "kind", "metadata", "spec", "status"});
  // creationTimestamp: the older of two backends keeps a prefix or user
  // name (api/claims.h).
  KeepMetadata(object, {"name", "namespace", "uid", "resourceVersion", "generation", "labels",
                        "annotations", "finalizers", "deletionTimestamp", "creationTimestamp"});
  if (!object.is_object()) return;
  auto status = object.find("status");
  if (status != object.end() && status->is_object()) *status = api::Pack(*status);
}

}  // namespace switchboard::kube
