#include "cache_shapes.h"

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/operator_logic/packed.h"

namespace switchboard::operator_controller {
namespace {

// The members each shape keeps: the transforms and the parse masks below
// both read these lists, so the two cannot disagree (an owned Secret has
// no transform: SecretRecordOf reads these members).
constexpr std::array<std::string_view, 2> kSecretMembers = {"metadata", "data"};
constexpr std::array<std::string_view, 8> kSecretMetadata = {"name",
                                                             "namespace",
                                                             "uid",
                                                             "resourceVersion",
                                                             "labels",
                                                             "annotations",
                                                             "ownerReferences",
                                                             "deletionTimestamp"};
constexpr std::array<std::string_view, 3> kOwnerReferenceMembers = {"kind", "name", "uid"};
constexpr std::array<std::string_view, 5> kCustomObjectMembers = {"apiVersion", "kind", "metadata",
                                                                  "spec", "status"};
// creationTimestamp: the older of two backends keeps a prefix or user name
// (api/claims.h).
constexpr std::array<std::string_view, 10> kCustomObjectMetadata = {
    "name",   "namespace",   "uid",        "resourceVersion",   "generation",
    "labels", "annotations", "finalizers", "deletionTimestamp", "creationTimestamp"};

// Removes every member of `obj` not named in `keep`.
template <size_t N>
void KeepOnly(json& obj, const std::array<std::string_view, N>& keep) {
  if (!obj.is_object()) return;
  for (auto it = obj.begin(); it != obj.end();) {
    bool wanted = false;
    for (auto k : keep) wanted = wanted || it.key() == k;
    it = wanted ? std::next(it) : obj.erase(it);
  }
}

template <size_t N>
void KeepMetadata(json& obj, const std::array<std::string_view, N>& keep) {
  auto meta = obj.find("metadata");
  if (meta != obj.end()) KeepOnly(*meta, keep);
}

// A mask path per member of `members`, with `metadata` narrowed to the
// members listed in `metadata`.
template <size_t M, size_t K>
std::vector<std::vector<std::string>> PathsOf(const std::array<std::string_view, M>& members,
                                              const std::array<std::string_view, K>& metadata) {
  std::vector<std::vector<std::string>> paths;
  for (auto m : members) {
    if (m != "metadata") paths.push_back({std::string(m)});
  }
  for (auto m : metadata) paths.push_back({"metadata", std::string(m)});
  return paths;
}

}  // namespace

kube::FieldMask OwnedSecretFields() {
  std::vector<std::vector<std::string>> paths;
  for (auto& p : PathsOf(kSecretMembers, kSecretMetadata)) {
    if (p.size() == 2 && p[1] == "ownerReferences") continue;  // narrowed below
    paths.push_back(std::move(p));
  }
  for (auto m : kOwnerReferenceMembers) {
    paths.push_back({"metadata", "ownerReferences", std::string(m)});
  }
  return kube::FieldMask::Keep(paths);
}

void CompactCustomObject(json& object) {
  KeepOnly(object, kCustomObjectMembers);
  KeepMetadata(object, kCustomObjectMetadata);
  if (!object.is_object()) return;
  auto status = object.find("status");
  if (status != object.end() && status->is_object()) *status = operator_logic::Pack(*status);
}

kube::FieldMask CustomObjectFields() {
  return kube::FieldMask::Keep(PathsOf(kCustomObjectMembers, kCustomObjectMetadata));
}

}  // namespace switchboard::operator_controller
