#include "switchboard/operator_logic/packed.h"

#include <string>

namespace switchboard::operator_logic {
namespace {

std::optional<nlohmann::json> Unpack(const nlohmann::json& packed) {
  const auto& bytes = packed.get_binary();
  auto parsed = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
  if (parsed.is_discarded()) return std::nullopt;
  return parsed;
}

}  // namespace

nlohmann::json Pack(const nlohmann::json& member) {
  const std::string text = member.dump();
  return nlohmann::json::binary(std::vector<std::uint8_t>(text.begin(), text.end()));
}

bool IsPacked(const nlohmann::json& value) { return value.is_binary(); }

std::optional<nlohmann::json> ObjectMember(const nlohmann::json& object, std::string_view key) {
  if (!object.is_object()) return nlohmann::json::object();
  auto it = object.find(key);
  if (it == object.end()) return nlohmann::json::object();
  if (it->is_object()) return *it;
  if (!it->is_binary()) return nlohmann::json::object();
  auto unpacked = Unpack(*it);
  if (!unpacked || !unpacked->is_object()) return std::nullopt;
  return unpacked;
}

nlohmann::json StatusOf(const nlohmann::json& object) {
  return ObjectMember(object, "status").value_or(nlohmann::json::object());
}

nlohmann::json ApiShaped(const nlohmann::json& object) {
  nlohmann::json copy = object;
  if (!copy.is_object()) return copy;
  for (auto& [key, value] : copy.items()) {
    if (!value.is_binary()) continue;
    auto unpacked = Unpack(value);
    value = unpacked ? std::move(*unpacked) : nlohmann::json();
  }
  return copy;
}

}  // namespace switchboard::operator_logic
