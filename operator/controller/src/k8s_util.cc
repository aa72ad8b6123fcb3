#include "k8s_util.h"

#include "cache_shapes.h"

namespace switchboard::operator_controller {
namespace {
const json* Meta(const json& obj) {
  auto meta = obj.find("metadata");
  return meta != obj.end() && meta->is_object() ? &*meta : nullptr;
}
}  // namespace

bool HasFinalizer(const json& obj, std::string_view finalizer) {
  const json* meta = Meta(obj);
  if (meta == nullptr) return false;
  auto f = meta->find("finalizers");
  if (f == meta->end() || !f->is_array()) return false;
  for (const auto& x : *f) {
    if (x.is_string() && x.get_ref<const std::string&>() == finalizer) return true;
  }
  return false;
}

bool IsDeleting(const json& obj) {
  const json* meta = Meta(obj);
  if (meta == nullptr) return false;
  auto ts = meta->find("deletionTimestamp");
  return ts != meta->end() && !ts->is_null();
}

int64_t GenerationOf(const json& obj) {
  const json* meta = Meta(obj);
  if (meta == nullptr) return 0;
  auto g = meta->find("generation");
  return g != meta->end() && g->is_number_integer() ? g->get<int64_t>() : 0;
}

std::string UidOf(const json& obj) {
  const json* meta = Meta(obj);
  return meta == nullptr ? std::string() : meta->value("uid", "");
}

std::string Annotation(const json& obj, std::string_view key) {
  const json* meta = Meta(obj);
  if (meta == nullptr) return "";
  auto a = meta->find("annotations");
  if (a == meta->end() || !a->is_object()) return "";
  auto v = a->find(std::string(key));
  return v != a->end() && v->is_string() ? v->get<std::string>() : "";
}

json StatusOf(const json& obj) { return UnpackedStatus(obj); }

}  // namespace switchboard::operator_controller
