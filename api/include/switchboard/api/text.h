// Visible text: which characters a person cannot see (or that break,
// reorder or hide the text around them), for names people compare by eye
// (subject prefixes and NATS user names, shown side by side in
// `kubectl get psb` and NATS monitoring), and for echoing untrusted text in
// messages and logs. The rules, the CLI's output and every message that
// quotes a value use this one classification.
//
// The tables are a few ranges, pinned to Unicode 15.1 (UnicodeData.txt for
// the categories Cc, Cf, Zs, Zl, Zp, Co; DerivedCoreProperties.txt for
// Default_Ignorable_Code_Point; PropList.txt for Noncharacter_Code_Point),
// not a library: the webhook, `switchboard validate` and the operator then
// give the same verdict whatever Unicode data the machine they run on has.
// Unassigned code points are not judged (that needs the whole table); they
// show as a visible replacement box.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace switchboard::api {

enum class CharClass {
  kVisible,
  kControl,             // Cc: U+0000-U+001F, U+007F-U+009F
  kFormat,              // Cf: zero-width characters, bidi controls, U+FEFF, U+00AD, tags
  kLineSeparator,       // Zl: U+2028
  kParagraphSeparator,  // Zp: U+2029
  kSpace,               // Zs other than U+0020: U+00A0, U+2000-U+200A, U+3000, ...
  kIgnorable,           // other Default_Ignorable_Code_Point: variation selectors, fillers
  kBlank,               // visible by category but drawn as nothing: U+2800
  kPrivateUse,          // Co: no agreed glyph
  kNoncharacter,        // U+FDD0-U+FDEF, U+xxFFFE, U+xxFFFF
};

CharClass ClassifyCodePoint(char32_t c);
inline bool IsVisible(char32_t c) { return ClassifyCodePoint(c) == CharClass::kVisible; }

// Decodes the UTF-8 sequence at s[i] into *out and returns its length; 0 when
// it is not valid UTF-8 (truncated, overlong, a surrogate, above U+10FFFF).
size_t DecodeUtf8(std::string_view s, size_t i, char32_t* out);

// One character a reader could not see, or a byte that is not UTF-8.
struct InvisibleChar {
  size_t position = 0;  // 1-based, in characters (an invalid byte counts as one)
  char32_t code_point = 0;
  bool invalid_utf8 = false;  // then `byte` is the offending byte
  unsigned char byte = 0;
  CharClass kind = CharClass::kVisible;
  // "U+2028 LINE SEPARATOR", "U+E000 (a private-use character)",
  // "byte 0xFF (not valid UTF-8)".
  std::string Describe() const;
};

// The first character of `text` that is not visible (U+0020 counts as
// visible), passing over those for which `skip` is true (a caller that
// reports them in other words); nullopt when none.
std::optional<InvisibleChar> FindInvisible(std::string_view text, bool (*skip)(char32_t) = nullptr);

// "U+2028": 4 to 6 upper-case hex digits.
std::string CodePointLabel(char32_t c);

// `text` with every character that is not visible written as an escape:
// \n \r \t, other ASCII controls and bytes that are not UTF-8 as \xNN, the
// rest as \uXXXX or \UXXXXXXXX. Visible text, non-ASCII letters included,
// is unchanged.
std::string EscapeInvisible(std::string_view text);

}  // namespace switchboard::api
