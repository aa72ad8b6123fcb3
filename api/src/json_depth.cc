#include "switchboard/api/json_depth.h"

namespace switchboard::api {

size_t FindNestingBeyond(std::string_view text, int max_depth) {
  int depth = 0;
  const size_t n = text.size();
  for (size_t pos = 0; pos < n; ++pos) {
    switch (text[pos]) {
      case '"':
        // Skip the string in a tight loop: to the next quote not escaped.
        for (++pos; pos < n && text[pos] != '"'; ++pos) {
          if (text[pos] == '\\') ++pos;
        }
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
