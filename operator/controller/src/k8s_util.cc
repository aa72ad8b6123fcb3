#include "k8s_util.h"

#include <openssl/evp.h>

#include <chrono>
#include <cstdio>
#include <ctime>

#include "switchboard/common/base64.h"
#include "switchboard/operator/time_util.h"

namespace switchboard::controller {

// metav1.Time text, through operator_logic's one implementation.
std::string FormatRfc3339(std::chrono::system_clock::time_point t) {
  return operator_logic::FormatTime(t);
}

std::string NowRfc3339() { return FormatRfc3339(std::chrono::system_clock::now()); }

bool ParseRfc3339(std::string_view text, std::chrono::system_clock::time_point* out) {
  auto t = operator_logic::ParseTime(text);
  if (!t.ok()) return false;
  *out = *t;
  return true;
}

json Condition(std::string_view type, bool status, std::string_view reason,
               std::string_view message, int64_t generation) {
  return {{"type", type},
          {"status", status ? "True" : "False"},
          {"reason", reason},
          {"message", message},
          {"observedGeneration", generation},
          {"lastTransitionTime", NowRfc3339()}};
}

void SetCondition(json* conditions, json cond) {
  if (!conditions->is_array()) *conditions = json::array();
  for (auto& c : *conditions) {
    if (c.value("type", "") == cond["type"].get<std::string>()) {
      if (c.value("status", "") == cond["status"].get<std::string>() &&
          c.contains("lastTransitionTime")) {
        cond["lastTransitionTime"] = c["lastTransitionTime"];
      }
      c = std::move(cond);
      return;
    }
  }
  conditions->push_back(std::move(cond));
}

const json* FindCondition(const json& obj, std::string_view type) {
  auto st = obj.find("status");
  if (st == obj.end() || !st->is_object()) return nullptr;
  auto cs = st->find("conditions");
  if (cs == st->end() || !cs->is_array()) return nullptr;
  for (const auto& c : *cs) {
    if (c.is_object() && c.value("type", "") == type) return &c;
  }
  return nullptr;
}

json OwnerReference(const json& owner) {
  return {{"apiVersion", owner.value("apiVersion", "")},
          {"kind", owner.value("kind", "")},
          {"name", owner["metadata"].value("name", "")},
          {"uid", owner["metadata"].value("uid", "")},
          {"controller", true},
          {"blockOwnerDeletion", true}};
}

bool IsOwnedBy(const json& obj, std::string_view owner_uid) {
  auto meta = obj.find("metadata");
  if (meta == obj.end()) return false;
  auto refs = meta->find("ownerReferences");
  if (refs == meta->end() || !refs->is_array()) return false;
  for (const auto& r : *refs) {
    if (r.is_object() && r.value("uid", "") == owner_uid) return true;
  }
  return false;
}

bool IsManagedBySwitchboard(const json& obj) {
  auto meta = obj.find("metadata");
  if (meta == obj.end()) return false;
  auto labels = meta->find("labels");
  return labels != meta->end() && labels->is_object() &&
         labels->value(kManagedByLabel, "") == kManagedByValue;
}

SecretData DecodeSecretData(const json& secret) {
  SecretData out;
  auto data = secret.find("data");
  if (data == secret.end() || !data->is_object()) return out;
  for (auto it = data->begin(); it != data->end(); ++it) {
    if (!it.value().is_string()) continue;
    std::string v;
    if (base64::Decode(it.value().get<std::string>(), &v)) out[it.key()] = std::move(v);
  }
  return out;
}

json EncodeSecretData(const SecretData& data) {
  json out = json::object();
  for (const auto& [k, v] : data) out[k] = base64::Encode(v);
  return out;
}

std::string Sha256Tagged(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr);
  static const char* kHex = "0123456789abcdef";
  std::string out = "sha256:";
  for (unsigned i = 0; i < len; i++) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 15];
  }
  return out;
}

bool HasFinalizer(const json& obj, std::string_view finalizer) {
  auto meta = obj.find("metadata");
  if (meta == obj.end()) return false;
  auto f = meta->find("finalizers");
  if (f == meta->end() || !f->is_array()) return false;
  for (const auto& x : *f) {
    if (x.is_string() && x.get<std::string>() == finalizer) return true;
  }
  return false;
}

bool IsDeleting(const json& obj) {
  auto meta = obj.find("metadata");
  return meta != obj.end() && meta->contains("deletionTimestamp") &&
         !(*meta)["deletionTimestamp"].is_null();
}

int64_t GenerationOf(const json& obj) {
  auto meta = obj.find("metadata");
  if (meta == obj.end()) return 0;
  return meta->value("generation", int64_t{0});
}

std::string Annotation(const json& obj, std::string_view key) {
  auto meta = obj.find("metadata");
  if (meta == obj.end()) return "";
  auto a = meta->find("annotations");
  if (a == meta->end() || !a->is_object()) return "";
  auto v = a->find(std::string(key));
  return v != a->end() && v->is_string() ? v->get<std::string>() : "";
}

}  // namespace switchboard::controller
