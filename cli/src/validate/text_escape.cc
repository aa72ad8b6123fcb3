#include "text_escape.h"

#include <cstdint>
#include <cstdio>

namespace switchboard::cli::validate {
namespace {

// Characters that are not visible on their own or that move text around.
bool Invisible(uint32_t c) {
  return c < 0x20 || (c >= 0x7F && c <= 0xA0) || c == 0xAD || c == 0x034F || c == 0x061C ||
         c == 0x115F || c == 0x1160 || c == 0x1680 || c == 0x180E ||
         (c >= 0x2000 && c <= 0x200F) ||  // spaces, zero-width, LRM/RLM
         (c >= 0x2028 && c <= 0x202F) ||  // line/paragraph separators, bidi embeddings, NNBSP
         (c >= 0x205F && c <= 0x206F) ||  // math space, invisible operators, bidi isolates
         c == 0x3000 || c == 0x3164 || c == 0xFEFF || (c >= 0xFFF0 && c <= 0xFFFB) ||
         (c >= 0xE0000 && c <= 0xE007F);  // tag characters
}

// Decodes one UTF-8 sequence at s[i]; returns its length, 0 when invalid.
size_t Decode(std::string_view s, size_t i, uint32_t* out) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char b = byte(i);
  size_t len;
  uint32_t c;
  if (b < 0x80) {
    *out = b;
    return 1;
  } else if ((b & 0xE0) == 0xC0) {
    len = 2;
    c = b & 0x1F;
  } else if ((b & 0xF0) == 0xE0) {
    len = 3;
    c = b & 0x0F;
  } else if ((b & 0xF8) == 0xF0) {
    len = 4;
    c = b & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    c = (c << 6) | (byte(i + k) & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (c < kMin[len] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
  *out = c;
  return len;
}

void Hex(std::string& out, const char* format, unsigned value) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), format, value);
  out += buf;
}

}  // namespace

std::string EscapeText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    uint32_t c = 0;
    size_t len = Decode(text, i, &c);
    if (len == 0) {
      Hex(out, "\\x%02X", static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    if (!Invisible(c)) {
      out.append(text.substr(i, len));
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x80) {
      Hex(out, "\\x%02X", c);
    } else if (c <= 0xFFFF) {
      Hex(out, "\\u%04X", c);
    } else {
      Hex(out, "\\U%08X", c);
    }
    i += len;
  }
  return out;
}

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
