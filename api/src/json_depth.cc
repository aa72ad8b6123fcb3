#include "switchboard/api/json_depth.h"

namespace switchboard::api {

size_t FindNestingBeyond(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (size_t pos = 0; pos < text.size(); ++pos) {
    char c = text[pos];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > max_depth) return pos;
        break;
      case ']':
      case '}':
        // A stray closing bracket is the parser's error; it must not let a
        // later value nest one level deeper unnoticed.
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
  }
  return std::string_view::npos;
}

}  // namespace switchboard::api
