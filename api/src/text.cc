#include "switchboard/api/text.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iterator>

namespace switchboard::api {
namespace {

struct Range {
  char32_t first, last;
};

// Unicode 15.1, general category Cf (UnicodeData.txt).
constexpr Range kFormat[] = {
    {0x00AD, 0x00AD},   {0x0600, 0x0605},   {0x061C, 0x061C},   {0x06DD, 0x06DD},
    {0x070F, 0x070F},   {0x0890, 0x0891},   {0x08E2, 0x08E2},   {0x180E, 0x180E},
    {0x200B, 0x200F},   {0x202A, 0x202E},   {0x2060, 0x2064},   {0x2066, 0x206F},
    {0xFEFF, 0xFEFF},   {0xFFF9, 0xFFFB},   {0x110BD, 0x110BD}, {0x110CD, 0x110CD},
    {0x13430, 0x1343F}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A}, {0xE0001, 0xE0001},
    {0xE0020, 0xE007F},
};

// Unicode 15.1, general category Zs without U+0020.
constexpr Range kSpace[] = {
    {0x00A0, 0x00A0}, {0x1680, 0x1680}, {0x2000, 0x200A},
    {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000},
};

// Unicode 15.1, Default_Ignorable_Code_Point (DerivedCoreProperties.txt)
// outside Cf: marks and letters that render as nothing, and the code points
// reserved for more of them.
constexpr Range kIgnorable[] = {
    {0x034F, 0x034F},   {0x115F, 0x1160},   {0x17B4, 0x17B5},   {0x180B, 0x180D},
    {0x180F, 0x180F},   {0x2065, 0x2065},   {0x3164, 0x3164},   {0xFE00, 0xFE0F},
    {0xFFA0, 0xFFA0},   {0xFFF0, 0xFFF8},   {0xE0000, 0xE0000}, {0xE0002, 0xE001F},
    {0xE0080, 0xE00FF}, {0xE0100, 0xE01EF}, {0xE01F0, 0xE0FFF},
};

// Unicode 15.1, general category Co.
constexpr Range kPrivateUse[] = {{0xE000, 0xF8FF}, {0xF0000, 0xFFFFD}, {0x100000, 0x10FFFD}};

template <size_t N>
bool In(const Range (&table)[N], char32_t c) {
  // Sorted and disjoint: the first range that does not end before c.
  const Range* r = std::lower_bound(std::begin(table), std::end(table), c,
                                    [](const Range& r, char32_t v) { return r.last < v; });
  return r != std::end(table) && r->first <= c;
}

// Names (UnicodeData.txt, or the formal alias for a control) of the
// characters people paste by accident; others are described by their class.
struct Named {
  char32_t c;
  std::string_view name;
};
constexpr Named kNames[] = {
    {0x0000, "NULL"},
    {0x0009, "CHARACTER TABULATION"},
    {0x000A, "LINE FEED"},
    {0x000B, "LINE TABULATION"},
    {0x000C, "FORM FEED"},
    {0x000D, "CARRIAGE RETURN"},
    {0x001B, "ESCAPE"},
    {0x007F, "DELETE"},
    {0x0085, "NEXT LINE"},
    {0x00A0, "NO-BREAK SPACE"},
    {0x00AD, "SOFT HYPHEN"},
    {0x034F, "COMBINING GRAPHEME JOINER"},
    {0x061C, "ARABIC LETTER MARK"},
    {0x115F, "HANGUL CHOSEONG FILLER"},
    {0x1160, "HANGUL JUNGSEONG FILLER"},
    {0x1680, "OGHAM SPACE MARK"},
    {0x180E, "MONGOLIAN VOWEL SEPARATOR"},
    {0x2000, "EN QUAD"},
    {0x2001, "EM QUAD"},
    {0x2002, "EN SPACE"},
    {0x2003, "EM SPACE"},
    {0x2004, "THREE-PER-EM SPACE"},
    {0x2005, "FOUR-PER-EM SPACE"},
    {0x2006, "SIX-PER-EM SPACE"},
    {0x2007, "FIGURE SPACE"},
    {0x2008, "PUNCTUATION SPACE"},
    {0x2009, "THIN SPACE"},
    {0x200A, "HAIR SPACE"},
    {0x200B, "ZERO WIDTH SPACE"},
    {0x200C, "ZERO WIDTH NON-JOINER"},
    {0x200D, "ZERO WIDTH JOINER"},
    {0x200E, "LEFT-TO-RIGHT MARK"},
    {0x200F, "RIGHT-TO-LEFT MARK"},
    {0x2028, "LINE SEPARATOR"},
    {0x2029, "PARAGRAPH SEPARATOR"},
    {0x202A, "LEFT-TO-RIGHT EMBEDDING"},
    {0x202B, "RIGHT-TO-LEFT EMBEDDING"},
    {0x202C, "POP DIRECTIONAL FORMATTING"},
    {0x202D, "LEFT-TO-RIGHT OVERRIDE"},
    {0x202E, "RIGHT-TO-LEFT OVERRIDE"},
    {0x202F, "NARROW NO-BREAK SPACE"},
    {0x205F, "MEDIUM MATHEMATICAL SPACE"},
    {0x2060, "WORD JOINER"},
    {0x2061, "FUNCTION APPLICATION"},
    {0x2062, "INVISIBLE TIMES"},
    {0x2063, "INVISIBLE SEPARATOR"},
    {0x2064, "INVISIBLE PLUS"},
    {0x2066, "LEFT-TO-RIGHT ISOLATE"},
    {0x2067, "RIGHT-TO-LEFT ISOLATE"},
    {0x2068, "FIRST STRONG ISOLATE"},
    {0x2069, "POP DIRECTIONAL ISOLATE"},
    {0x2800, "BRAILLE PATTERN BLANK"},
    {0x3000, "IDEOGRAPHIC SPACE"},
    {0x3164, "HANGUL FILLER"},
    {0xFEFF, "ZERO WIDTH NO-BREAK SPACE"},
    {0xFFA0, "HALFWIDTH HANGUL FILLER"},
    {0xFFF9, "INTERLINEAR ANNOTATION ANCHOR"},
    {0xFFFA, "INTERLINEAR ANNOTATION SEPARATOR"},
    {0xFFFB, "INTERLINEAR ANNOTATION TERMINATOR"},
    {0xE0001, "LANGUAGE TAG"},
};

std::string_view ClassWords(CharClass k) {
  switch (k) {
    case CharClass::kControl:
      return "a control character";
    case CharClass::kFormat:
      return "an invisible format character";
    case CharClass::kLineSeparator:
      return "a line separator";
    case CharClass::kParagraphSeparator:
      return "a paragraph separator";
    case CharClass::kSpace:
      return "a space other than U+0020";
    case CharClass::kIgnorable:
      return "a character that renders as nothing";
    case CharClass::kBlank:
      return "a blank character";
    case CharClass::kPrivateUse:
      return "a private-use character";
    case CharClass::kNoncharacter:
      return "a Unicode noncharacter";
    case CharClass::kVisible:
      break;
  }
  return "a visible character";
}

void Hex(std::string& out, const char* format, unsigned value) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), format, value);
  out += buf;
}

}  // namespace

CharClass ClassifyCodePoint(char32_t c) {
  if (c < 0x20 || (c >= 0x7F && c <= 0x9F)) return CharClass::kControl;
  if (c < 0x7F) return CharClass::kVisible;  // the common case, before any table
  if (c == 0x2028) return CharClass::kLineSeparator;
  if (c == 0x2029) return CharClass::kParagraphSeparator;
  if (c == 0x2800) return CharClass::kBlank;
  if (In(kFormat, c)) return CharClass::kFormat;
  if (In(kSpace, c)) return CharClass::kSpace;
  if (In(kIgnorable, c)) return CharClass::kIgnorable;
  if (In(kPrivateUse, c)) return CharClass::kPrivateUse;
  if ((c >= 0xFDD0 && c <= 0xFDEF) || (c & 0xFFFE) == 0xFFFE) return CharClass::kNoncharacter;
  return CharClass::kVisible;
}

size_t DecodeUtf8(std::string_view s, size_t i, char32_t* out) {
  if (i >= s.size()) return 0;
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char b = byte(i);
  size_t len;
  char32_t c;
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
  static constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (c < kMin[len] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
  *out = c;
  return len;
}

std::string CodePointLabel(char32_t c) {
  std::string out;
  Hex(out, "U+%04X", static_cast<unsigned>(c));
  return out;
}

std::string InvisibleChar::Describe() const {
  std::string out;
  if (invalid_utf8) {
    Hex(out, "byte 0x%02X", byte);
    return out + " (not valid UTF-8)";
  }
  out = CodePointLabel(code_point);
  for (const auto& n : kNames) {
    if (n.c == code_point) return out + " " + std::string(n.name);
  }
  return out + " (" + std::string(ClassWords(kind)) + ")";
}

std::optional<InvisibleChar> FindInvisible(std::string_view text, bool (*skip)(char32_t)) {
  size_t position = 0;
  for (size_t i = 0; i < text.size();) {
    ++position;
    char32_t c = 0;
    size_t len = DecodeUtf8(text, i, &c);
    if (len == 0) {
      InvisibleChar found;
      found.position = position;
      found.invalid_utf8 = true;
      found.byte = static_cast<unsigned char>(text[i]);
      return found;
    }
    if (CharClass k = ClassifyCodePoint(c); k != CharClass::kVisible && !(skip && skip(c))) {
      InvisibleChar found;
      found.position = position;
      found.code_point = c;
      found.kind = k;
      return found;
    }
    i += len;
  }
  return std::nullopt;
}

std::string EscapeInvisible(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    char32_t c = 0;
    size_t len = DecodeUtf8(text, i, &c);
    if (len == 0) {
      Hex(out, "\\x%02X", static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    if (IsVisible(c)) {
      out.append(text.substr(i, len));
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x80) {
      Hex(out, "\\x%02X", static_cast<unsigned>(c));
    } else if (c <= 0xFFFF) {
      Hex(out, "\\u%04X", static_cast<unsigned>(c));
    } else {
      Hex(out, "\\U%08X", static_cast<unsigned>(c));
    }
    i += len;
  }
  return out;
}

}  // namespace switchboard::api
