// Message helpers shared by every rule group.
#include "sink.h"

#include "switchboard/api/text.h"

namespace switchboard::rules::internal {

std::string Quote(std::string_view value) {
  std::string out = "\"";
  size_t n = 0;
  for (size_t i = 0; i < value.size();) {
    if (++n > 80) {
      out += "...";
      break;
    }
    char32_t c = 0;
    size_t len = api::DecodeUtf8(value, i, &c);
    if (len == 0) len = 1;  // EscapeInvisible writes the byte as \xNN
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else {
      out += api::EscapeInvisible(value.substr(i, len));
    }
    i += len;
  }
  return out + "\"";
}

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
