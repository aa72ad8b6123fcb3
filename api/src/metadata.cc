#include "switchboard/api/metadata.h"

#include "switchboard/api/json_fields.h"

namespace switchboard::api {
namespace {

std::string Meta(const nlohmann::json& o, std::string_view key) {
  auto s = String(Path(o, {"metadata", key}));
  return s ? std::string(*s) : std::string();
}

}  // namespace

std::string NameOf(const nlohmann::json& o) { return Meta(o, "name"); }
std::string NamespaceOf(const nlohmann::json& o) { return Meta(o, "namespace"); }
std::string UidOf(const nlohmann::json& o) { return Meta(o, "uid"); }
std::string ResourceVersionOf(const nlohmann::json& o) { return Meta(o, "resourceVersion"); }

std::string KindOf(const nlohmann::json& o) {
  auto s = String(Field(o, "kind"));
  return s ? std::string(*s) : std::string();
}

int64_t GenerationOf(const nlohmann::json& o) {
  const nlohmann::json* g = Path(o, {"metadata", "generation"});
  return g != nullptr && g->is_number_integer() ? g->get<int64_t>() : 0;
}

bool IsDeleting(const nlohmann::json& o) {
  const nlohmann::json* ts = Path(o, {"metadata", "deletionTimestamp"});
  return ts != nullptr && !ts->is_null();
}

bool HasFinalizer(const nlohmann::json& o, std::string_view finalizer) {
  const nlohmann::json* f = Path(o, {"metadata", "finalizers"});
  if (f == nullptr || !f->is_array()) return false;
  for (const auto& x : *f) {
    if (x.is_string() && x.get_ref<const std::string&>() == finalizer) return true;
  }
  return false;
}

bool HasAnnotation(const nlohmann::json& o, std::string_view key) {
  return Field(Path(o, {"metadata", "annotations"}), key) != nullptr;
}

std::string Annotation(const nlohmann::json& o, std::string_view key) {
  auto s = String(Field(Path(o, {"metadata", "annotations"}), key));
  return s ? std::string(*s) : std::string();
}

}  // namespace switchboard::api
