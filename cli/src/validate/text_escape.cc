#include "text_escape.h"

#include <cstdio>

#include "switchboard/api/text.h"

namespace switchboard::cli::validate {
namespace {

void Hex(std::string& out, const char* format, unsigned value) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), format, value);
  out += buf;
}

}  // namespace

// One classification of what a reader cannot see, shared with the rules'
// messages (switchboard/api/text.h).
std::string EscapeText(std::string_view text) { return api::EscapeInvisible(text); }

std::string PercentEncodePath(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (char ch : path) {
    auto c = static_cast<unsigned char>(ch);
    bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_' || c == '~' || c == '/';
    if (unreserved) {
      out += ch;
    } else {
      Hex(out, "%%%02X", c);
    }
  }
  return out;
}

}  // namespace switchboard::cli::validate
