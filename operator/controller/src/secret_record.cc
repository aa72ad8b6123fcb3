#include "secret_record.h"

#include <algorithm>

namespace switchboard::operator_controller {
namespace {

using json = nlohmann::json;

std::string StringAt(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

SecretRecord::Pairs PairsAt(const json& obj, const char* key) {
  SecretRecord::Pairs out;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_object()) return out;
  out.reserve(it->size());
  // nlohmann's objects iterate in key order: the pairs come out sorted.
  for (auto m = it->begin(); m != it->end(); ++m) {
    if (m.value().is_string()) out.emplace_back(m.key(), m.value().get<std::string>());
  }
  return out;
}

json ObjectOfPairs(const SecretRecord::Pairs& pairs) {
  json out = json::object();
  for (const auto& [k, v] : pairs) out[k] = v;
  return out;
}

}  // namespace

SecretRecord SecretRecordOf(const json& secret) {
  SecretRecord r;
  if (!secret.is_object()) return r;
  r.data = PairsAt(secret, "data");
  auto meta = secret.find("metadata");
  if (meta == secret.end() || !meta->is_object()) return r;
  r.ns = StringAt(*meta, "namespace");
  r.name = StringAt(*meta, "name");
  r.uid = StringAt(*meta, "uid");
  r.resource_version = StringAt(*meta, "resourceVersion");
  r.deletion_timestamp = StringAt(*meta, "deletionTimestamp");
  r.labels = PairsAt(*meta, "labels");
  r.annotations = PairsAt(*meta, "annotations");
  auto refs = meta->find("ownerReferences");
  if (refs != meta->end() && refs->is_array()) {
    r.owners.reserve(refs->size());
    for (const auto& ref : *refs) {
      if (!ref.is_object()) continue;
      r.owners.push_back({StringAt(ref, "kind"), StringAt(ref, "name"), StringAt(ref, "uid")});
    }
  }
  return r;
}

json ObjectOf(const SecretRecord& r) {
  json meta = json::object();
  if (!r.name.empty()) meta["name"] = r.name;
  if (!r.ns.empty()) meta["namespace"] = r.ns;
  if (!r.uid.empty()) meta["uid"] = r.uid;
  if (!r.resource_version.empty()) meta["resourceVersion"] = r.resource_version;
  if (!r.deletion_timestamp.empty()) meta["deletionTimestamp"] = r.deletion_timestamp;
  if (!r.labels.empty()) meta["labels"] = ObjectOfPairs(r.labels);
  if (!r.annotations.empty()) meta["annotations"] = ObjectOfPairs(r.annotations);
  if (!r.owners.empty()) {
    json refs = json::array();
    for (const auto& o : r.owners) {
      refs.push_back({{"kind", o.kind}, {"name", o.name}, {"uid", o.uid}});
    }
    meta["ownerReferences"] = std::move(refs);
  }
  json out = {{"metadata", std::move(meta)}};
  if (!r.data.empty()) out["data"] = ObjectOfPairs(r.data);
  return out;
}

}  // namespace switchboard::operator_controller
