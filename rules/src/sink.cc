// Message helpers shared by every rule group.
#include "sink.h"

#include "switchboard/api/values.h"

namespace switchboard::rules::internal {

std::string Quote(std::string_view value) { return api::Quote(value); }

std::string TypeName(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::object:
      return "an object";
    case nlohmann::json::value_t::array:
      return "a list";
    case nlohmann::json::value_t::string:
      return "a string";
    case nlohmann::json::value_t::boolean:
      return "a boolean";
    case nlohmann::json::value_t::number_float:
      return "a decimal number";
    default:
      return "a number";
  }
}

}  // namespace switchboard::rules::internal
