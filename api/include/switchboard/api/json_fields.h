// Safe reads from Kubernetes JSON of unknown shape: a missing member, a
// member of the wrong type, or a parent that is not an object all read as
// absent. Never throws. Pointers/views point into the given json.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

namespace switchboard::api {

// obj[key] when obj is an object that has key; nullptr otherwise.
inline const nlohmann::json* Field(const nlohmann::json* obj, std::string_view key) {
  if (obj == nullptr || !obj->is_object()) return nullptr;
  auto it = obj->find(key);
  return it == obj->end() ? nullptr : &*it;
}
inline const nlohmann::json* Field(const nlohmann::json& obj, std::string_view key) {
  return Field(&obj, key);
}

// Walks a path of member names: Path(o, {"spec", "nats", "serverRef"}).
inline const nlohmann::json* Path(const nlohmann::json& obj,
                                  std::initializer_list<std::string_view> keys) {
  const nlohmann::json* cur = &obj;
  for (auto k : keys) {
    cur = Field(cur, k);
    if (cur == nullptr) return nullptr;
  }
  return cur;
}

// The string value, or nullopt when absent or not a string.
inline std::optional<std::string_view> String(const nlohmann::json* v) {
  if (v == nullptr || !v->is_string()) return std::nullopt;
  return std::string_view(v->get_ref<const std::string&>());
}

// The value as int64 when it is an integer (or a whole float), else nullopt.
std::optional<int64_t> Integer(const nlohmann::json* v);

}  // namespace switchboard::api
