#include "json_reader.h"

#include <cstring>
#include <vector>

namespace switchboard::pubsub::internal {
namespace {

constexpr size_t kMaxDepth = 10000;  // Go's scanner limit

// Bytes that may appear in a string without escaping or UTF-8 checks.
struct PlainTable {
  bool v[256];
  constexpr PlainTable() : v() {
    for (unsigned i = 0x20; i < 0x80; ++i) v[i] = i != '"' && i != '\\';
  }
};
constexpr PlainTable kPlain;

void AppendUtf8(uint32_t r, std::string* out) {
  if (r < 0x80) {
    out->push_back(static_cast<char>(r));
  } else if (r < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (r >> 6)));
    out->push_back(static_cast<char>(0x80 | (r & 0x3F)));
  } else if (r < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (r >> 12)));
    out->push_back(static_cast<char>(0x80 | ((r >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (r & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (r >> 18)));
    out->push_back(static_cast<char>(0x80 | ((r >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((r >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (r & 0x3F)));
  }
}

// Valid UTF-8 sequence length at s[i] (Go's rules) or 0.
size_t ValidUtf8(std::string_view s, size_t i) {
  auto at = [&](size_t k) { return static_cast<uint8_t>(s[i + k]); };
  size_t n = s.size() - i;
  uint8_t b0 = at(0);
  auto cont = [&](size_t k) { return k < n && (at(k) & 0xC0) == 0x80; };
  if (b0 >= 0xC2 && b0 <= 0xDF) return cont(1) ? 2 : 0;
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (b0 == 0xE0 && at(1) < 0xA0) return 0;   // overlong
    if (b0 == 0xED && at(1) >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (b0 == 0xF0 && at(1) < 0x90) return 0;
    if (b0 == 0xF4 && at(1) >= 0x90) return 0;
    return 4;
  }
  return 0;
}

}  // namespace

bool JsonReader::Fail(std::string what) {
  if (error_.empty()) error_ = std::move(what) + " at byte " + std::to_string(pos_);
  return false;
}

void JsonReader::SkipWs() {
  while (pos_ < s_.size()) {
    char c = s_[pos_];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
    ++pos_;
  }
}

bool JsonReader::Consume(char c) {
  if (Peek() != c || pos_ >= s_.size()) return false;
  ++pos_;
  return true;
}

bool JsonReader::ExpectLiteral(std::string_view lit) {
  if (s_.substr(pos_, lit.size()) != lit)
    return Fail("invalid literal (want " + std::string(lit) + ")");
  pos_ += lit.size();
  return true;
}

bool JsonReader::ConsumeNull() {
  if (Peek() != 'n') return false;
  return ExpectLiteral("null");
}

bool JsonReader::ReadBool(bool* out) {
  char c = Peek();
  if (c == 't') {
    *out = true;
    return ExpectLiteral("true");
  }
  if (c == 'f') {
    *out = false;
    return ExpectLiteral("false");
  }
  return false;
}

bool JsonReader::ReadHex4(uint32_t* out) {
  if (pos_ + 4 > s_.size()) return Fail("truncated \\u escape");
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    char c = s_[pos_++];
    v <<= 4;
    if (c >= '0' && c <= '9')
      v |= static_cast<uint32_t>(c - '0');
    else if (c >= 'a' && c <= 'f')
      v |= static_cast<uint32_t>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      v |= static_cast<uint32_t>(c - 'A' + 10);
    else
      return Fail("invalid \\u escape");
  }
  *out = v;
  return true;
}

bool JsonReader::ReadString(std::string_view* view, std::string* owned) {
  if (Peek() != '"') return Fail("expected a string");
  size_t start = ++pos_;
  // Fast path: scan for the closing quote; plain ASCII without escapes is
  // returned as a view (the common case: base64 payloads, ids).
  size_t i = start;
  const char* data = s_.data();
  size_t n = s_.size();
  // Eight bytes at a time (SWAR): stop at the first block holding a quote,
  // a backslash, a control byte or a non-ASCII byte; finish bytewise.
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  auto has_zero = [&](uint64_t x) { return (x - kOnes) & ~x & kHigh; };
  while (i + 8 <= n) {
    uint64_t x;
    std::memcpy(&x, data + i, 8);
    uint64_t special = has_zero(x ^ (kOnes * '"')) | has_zero(x ^ (kOnes * '\\')) |
                       ((x - kOnes * 0x20) & ~x & kHigh) | (x & kHigh);
    if (special != 0) break;
    i += 8;
  }
  while (i < n && kPlain.v[static_cast<unsigned char>(data[i])]) ++i;
  if (i < n && data[i] == '"') {
    *view = s_.substr(start, i - start);
    pos_ = i + 1;
    return true;
  }
  // Slow path: unescape into *owned.
  owned->assign(data + start, i - start);
  pos_ = i;
  while (true) {
    if (pos_ >= n) return Fail("unterminated string");
    unsigned char c = static_cast<unsigned char>(s_[pos_]);
    if (c == '"') {
      ++pos_;
      *view = *owned;
      return true;
    }
    if (c < 0x20) return Fail("control character in string");
    if (c == '\\') {
      if (++pos_ >= n) return Fail("unterminated string");
      char e = s_[pos_++];
      switch (e) {
        case '"':
          owned->push_back('"');
          break;
        case '\\':
          owned->push_back('\\');
          break;
        case '/':
          owned->push_back('/');
          break;
        case 'b':
          owned->push_back('\b');
          break;
        case 'f':
          owned->push_back('\f');
          break;
        case 'n':
          owned->push_back('\n');
          break;
        case 'r':
          owned->push_back('\r');
          break;
        case 't':
          owned->push_back('\t');
          break;
        case 'u': {
          uint32_t r;
          if (!ReadHex4(&r)) return false;
          if (r >= 0xD800 && r < 0xDC00) {
            // A high surrogate pairs with a following \uDC00-\uDFFF.
            uint32_t lo;
            if (pos_ + 6 <= n && s_[pos_] == '\\' && s_[pos_ + 1] == 'u') {
              size_t save = pos_;
              pos_ += 2;
              if (!ReadHex4(&lo)) return false;
              if (lo >= 0xDC00 && lo < 0xE000) {
                r = 0x10000 + ((r - 0xD800) << 10) + (lo - 0xDC00);
              } else {
                pos_ = save;
                r = 0xFFFD;
              }
            } else {
              r = 0xFFFD;
            }
          } else if (r >= 0xDC00 && r < 0xE000) {
            r = 0xFFFD;
          }
          AppendUtf8(r, owned);
          break;
        }
        default:
          --pos_;
          return Fail("invalid escape in string");
      }
      continue;
    }
    if (c < 0x80) {
      owned->push_back(static_cast<char>(c));
      ++pos_;
      continue;
    }
    size_t len = ValidUtf8(s_, pos_);
    if (len == 0) {
      owned->append("\xEF\xBF\xBD");
      ++pos_;
    } else {
      owned->append(s_.substr(pos_, len));
      pos_ += len;
    }
  }
}

bool JsonReader::PeekRawString(std::string_view* raw) {
  if (Peek() != '"') return false;
  const void* q = std::memchr(s_.data() + pos_ + 1, '"', s_.size() - pos_ - 1);
  if (q == nullptr) return false;
  *raw = s_.substr(pos_ + 1,
                   static_cast<size_t>(static_cast<const char*>(q) - (s_.data() + pos_ + 1)));
  return true;
}

bool JsonReader::ReadNumber(std::string_view* text) {
  SkipWs();
  size_t start = pos_, n = s_.size();
  auto digit = [&](size_t k) { return k < n && s_[k] >= '0' && s_[k] <= '9'; };
  if (pos_ < n && s_[pos_] == '-') ++pos_;
  if (!digit(pos_)) return Fail("invalid number");
  if (s_[pos_] == '0') {
    ++pos_;
  } else {
    while (digit(pos_)) ++pos_;
  }
  if (pos_ < n && s_[pos_] == '.') {
    ++pos_;
    if (!digit(pos_)) return Fail("invalid number");
    while (digit(pos_)) ++pos_;
  }
  if (pos_ < n && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
    ++pos_;
    if (pos_ < n && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
    if (!digit(pos_)) return Fail("invalid number");
    while (digit(pos_)) ++pos_;
  }
  *text = s_.substr(start, pos_ - start);
  return true;
}

bool JsonReader::SkipValue() {
  // Iterative so hostile nesting cannot overflow the stack.
  std::vector<char> stack;  // '{' or '['
  std::string scratch;
  std::string_view sv;
  while (true) {
    char c = Peek();
    switch (c) {
      case '{':
      case '[':
        if (stack.size() >= kMaxDepth) return Fail("nesting too deep");
        ++pos_;
        stack.push_back(c);
        if (c == '{') {
          if (Consume('}')) {
            stack.pop_back();
            break;
          }
          if (!ReadString(&sv, &scratch)) return false;
          if (!Consume(':')) return Fail("expected ':'");
          continue;  // read the member's value
        }
        if (Consume(']')) {
          stack.pop_back();
          break;
        }
        continue;
      case '"':
        if (!ReadString(&sv, &scratch)) return false;
        break;
      case 't':
        if (!ExpectLiteral("true")) return false;
        break;
      case 'f':
        if (!ExpectLiteral("false")) return false;
        break;
      case 'n':
        if (!ExpectLiteral("null")) return false;
        break;
      default:
        if (c == '-' || (c >= '0' && c <= '9')) {
          if (!ReadNumber(&sv)) return false;
          break;
        }
        return Fail(c == '\0' ? "unexpected end of input" : "unexpected character");
    }
    // A value ended: close containers or move to the next element.
    while (true) {
      if (stack.empty()) return true;
      char top = stack.back();
      if (Consume(',')) {
        if (top == '{') {
          if (!ReadString(&sv, &scratch)) return false;
          if (!Consume(':')) return Fail("expected ':'");
        }
        break;
      }
      if (Consume(top == '{' ? '}' : ']')) {
        stack.pop_back();
        continue;
      }
      return Fail(top == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
    }
  }
}

bool JsonReader::AtEnd() {
  SkipWs();
  return pos_ == s_.size();
}

}  // namespace switchboard::pubsub::internal
