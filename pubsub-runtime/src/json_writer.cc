#include "json_writer.h"

#include <cstdint>

namespace switchboard::pubsub::internal {
namespace {

constexpr char kHex[] = "0123456789abcdef";

// Bytes below 0x80 Go writes unchanged (htmlSafeSet); bytes >= 0x80 need
// a UTF-8 check and count as "unsafe" here too.
constexpr bool SafeByte(unsigned b) {
  return b >= 0x20 && b < 0x80 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&';
}
struct SafeTable {
  bool v[256];
  constexpr SafeTable() : v() {
    for (unsigned i = 0; i < 256; ++i) v[i] = SafeByte(i);
  }
};
constexpr SafeTable kSafe;

// Length of the prefix that needs no escaping.
size_t SafePrefix(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && kSafe.v[static_cast<uint8_t>(s[i])]) ++i;
  return i;
}

// Length of the valid UTF-8 sequence at s[i] (Go's utf8.DecodeRune rules:
// shortest form, no surrogates, <= U+10FFFF), or 0 when invalid.
size_t Utf8Len(std::string_view s, size_t i, uint32_t* rune) {
  auto at = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  uint8_t b0 = at(i);
  size_t n = s.size() - i;
  auto cont = [&](size_t k) { return k < n && (at(i + k) & 0xC0) == 0x80; };
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    if (!cont(1)) return 0;
    *rune = ((b0 & 0x1Fu) << 6) | (at(i + 1) & 0x3Fu);
    return 2;
  }
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    uint32_t r = ((b0 & 0x0Fu) << 12) | ((at(i + 1) & 0x3Fu) << 6) | (at(i + 2) & 0x3Fu);
    if (r < 0x800 || (r >= 0xD800 && r <= 0xDFFF)) return 0;
    *rune = r;
    return 3;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    uint32_t r = ((b0 & 0x07u) << 18) | ((at(i + 1) & 0x3Fu) << 12) | ((at(i + 2) & 0x3Fu) << 6) |
                 (at(i + 3) & 0x3Fu);
    if (r < 0x10000 || r > 0x10FFFF) return 0;
    *rune = r;
    return 4;
  }
  return 0;
}

template <typename Sink>
void Escape(std::string_view s, Sink&& sink) {
  sink.put('"');
  size_t start = 0, i = 0;
  while (i < s.size()) {
    uint8_t b = static_cast<uint8_t>(s[i]);
    if (b < 0x80) {
      if (kSafe.v[b]) {
        ++i;
        continue;
      }
      sink.append(s.substr(start, i - start));
      switch (b) {
        case '\\':
          sink.append("\\\\");
          break;
        case '"':
          sink.append("\\\"");
          break;
        case '\b':
          sink.append("\\b");
          break;
        case '\f':
          sink.append("\\f");
          break;
        case '\n':
          sink.append("\\n");
          break;
        case '\r':
          sink.append("\\r");
          break;
        case '\t':
          sink.append("\\t");
          break;
        default: {
          char u[6] = {'\\', 'u', '0', '0', kHex[b >> 4], kHex[b & 0xF]};
          sink.append(std::string_view(u, 6));
        }
      }
      start = ++i;
      continue;
    }
    uint32_t rune = 0;
    size_t len = Utf8Len(s, i, &rune);
    if (len == 0) {
      sink.append(s.substr(start, i - start));
      sink.append("\\ufffd");
      start = ++i;
      continue;
    }
    if (rune == 0x2028 || rune == 0x2029) {
      sink.append(s.substr(start, i - start));
      sink.append(rune == 0x2028 ? "\\u2028" : "\\u2029");
      start = i + len;
    }
    i += len;
  }
  sink.append(s.substr(start));
  sink.put('"');
}

struct StringSink {
  std::string* out;
  void put(char c) { out->push_back(c); }
  void append(std::string_view v) { out->append(v); }
};

struct CountSink {
  size_t n = 0;
  void put(char) { ++n; }
  void append(std::string_view v) { n += v.size(); }
};

}  // namespace

void AppendJsonString(std::string_view s, std::string* out) {
  if (SafePrefix(s) == s.size()) {
    out->push_back('"');
    out->append(s);
    out->push_back('"');
    return;
  }
  Escape(s, StringSink{out});
}

size_t JsonStringSize(std::string_view s) {
  if (SafePrefix(s) == s.size()) return s.size() + 2;
  CountSink c;
  Escape(s, c);
  return c.n;
}

}  // namespace switchboard::pubsub::internal
