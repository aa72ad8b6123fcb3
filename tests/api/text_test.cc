// The classification of characters a reader cannot see (api/text.h): one
// row per class edge, the names in messages, the decoder and the escaping.
#include "switchboard/api/text.h"

#include <gtest/gtest.h>

namespace switchboard::api {
namespace {

TEST(ClassifyCodePoint, Table) {
  struct Case {
    char32_t c;
    CharClass want;
  } cases[] = {
      {U'a', CharClass::kVisible},
      {U' ', CharClass::kVisible},  // callers judge plain whitespace
      {U'~', CharClass::kVisible},
      {0x0000, CharClass::kControl},
      {0x001F, CharClass::kControl},
      {0x007F, CharClass::kControl},
      {0x0085, CharClass::kControl},
      {0x009F, CharClass::kControl},
      {0x00A0, CharClass::kSpace},
      {0x00A1, CharClass::kVisible},
      {0x00AD, CharClass::kFormat},
      {0x00E9, CharClass::kVisible},  // é
      {0x034F, CharClass::kIgnorable},
      {0x0600, CharClass::kFormat},
      {0x0605, CharClass::kFormat},
      {0x0606, CharClass::kVisible},
      {0x061C, CharClass::kFormat},
      {0x115F, CharClass::kIgnorable},
      {0x1680, CharClass::kSpace},
      {0x180B, CharClass::kIgnorable},
      {0x180E, CharClass::kFormat},
      {0x1FFF, CharClass::kVisible},
      {0x2000, CharClass::kSpace},
      {0x200A, CharClass::kSpace},
      {0x200B, CharClass::kFormat},
      {0x200F, CharClass::kFormat},
      {0x2010, CharClass::kVisible},  // HYPHEN
      {0x2027, CharClass::kVisible},
      {0x2028, CharClass::kLineSeparator},
      {0x2029, CharClass::kParagraphSeparator},
      {0x202A, CharClass::kFormat},
      {0x202E, CharClass::kFormat},
      {0x202F, CharClass::kSpace},
      {0x2030, CharClass::kVisible},
      {0x205F, CharClass::kSpace},
      {0x2060, CharClass::kFormat},
      {0x2064, CharClass::kFormat},
      {0x2065, CharClass::kIgnorable},
      {0x2066, CharClass::kFormat},
      {0x2069, CharClass::kFormat},
      {0x206F, CharClass::kFormat},
      {0x2070, CharClass::kVisible},
      {0x2800, CharClass::kBlank},
      {0x2801, CharClass::kVisible},
      {0x3000, CharClass::kSpace},
      {0x3164, CharClass::kIgnorable},
      {0xD7FF, CharClass::kVisible},
      {0xE000, CharClass::kPrivateUse},
      {0xF8FF, CharClass::kPrivateUse},
      {0xF900, CharClass::kVisible},
      {0xFDCF, CharClass::kVisible},
      {0xFDD0, CharClass::kNoncharacter},
      {0xFDEF, CharClass::kNoncharacter},
      {0xFE00, CharClass::kIgnorable},
      {0xFE0F, CharClass::kIgnorable},
      {0xFEFF, CharClass::kFormat},
      {0xFFA0, CharClass::kIgnorable},
      {0xFFF9, CharClass::kFormat},
      {0xFFFB, CharClass::kFormat},
      {0xFFFD, CharClass::kVisible},  // REPLACEMENT CHARACTER is drawn
      {0xFFFE, CharClass::kNoncharacter},
      {0xFFFF, CharClass::kNoncharacter},
      {0x1F600, CharClass::kVisible},
      {0x1FFFE, CharClass::kNoncharacter},
      {0x110BD, CharClass::kFormat},
      {0x13430, CharClass::kFormat},
      {0x1343F, CharClass::kFormat},
      {0x1D173, CharClass::kFormat},
      {0xE0001, CharClass::kFormat},
      {0xE0020, CharClass::kFormat},
      {0xE007F, CharClass::kFormat},
      {0xE0100, CharClass::kIgnorable},
      {0xE0FFF, CharClass::kIgnorable},
      {0xF0000, CharClass::kPrivateUse},
      {0x10FFFD, CharClass::kPrivateUse},
      {0x10FFFF, CharClass::kNoncharacter},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(static_cast<int>(ClassifyCodePoint(c.c)), static_cast<int>(c.want))
        << CodePointLabel(c.c);
  }
}

TEST(DecodeUtf8, ValidAndInvalid) {
  char32_t c = 0;
  EXPECT_EQ(DecodeUtf8("a", 0, &c), 1u);
  EXPECT_EQ(c, U'a');
  EXPECT_EQ(DecodeUtf8("\xE2\x80\xA8", 0, &c), 3u);
  EXPECT_EQ(c, 0x2028u);
  EXPECT_EQ(DecodeUtf8("\xF0\x9F\x98\x80", 0, &c), 4u);
  EXPECT_EQ(c, 0x1F600u);
  for (std::string_view bad : {
           std::string_view("\xC0\xAF"),          // overlong '/'
           std::string_view("\xE0\x80\xAF"),      // overlong
           std::string_view("\xED\xA0\x80"),      // surrogate U+D800
           std::string_view("\xF4\x90\x80\x80"),  // above U+10FFFF
           std::string_view("\xE2\x80"),          // truncated
           std::string_view("\x80"),              // lone continuation
           std::string_view("\xFF"),
       }) {
    EXPECT_EQ(DecodeUtf8(bad, 0, &c), 0u) << EscapeInvisible(bad);
  }
}

TEST(FindInvisible, NamesTheCodePointAndWhere) {
  struct Case {
    std::string_view text;
    std::string_view describe;  // empty: nothing found
    size_t position;
  } cases[] = {
      {"hatchet.team-a", "", 0},
      {"caf\xC3\xA9.team", "", 0},
      {"with space", "", 0},
      {"hatchet\xE2\x80\xA8x", "U+2028 LINE SEPARATOR", 8},
      {"a\xE2\x80\xA9", "U+2029 PARAGRAPH SEPARATOR", 2},
      {"\xE2\x80\x8B"
       "a",
       "U+200B ZERO WIDTH SPACE", 1},
      {"caf\xC3\xA9\xE2\x80\x8F", "U+200F RIGHT-TO-LEFT MARK", 5},
      {"a\xE2\x80\xAE"
       "b",
       "U+202E RIGHT-TO-LEFT OVERRIDE", 2},
      {"a\xE2\x81\xA6", "U+2066 LEFT-TO-RIGHT ISOLATE", 2},
      {"a\xEF\xBB\xBF", "U+FEFF ZERO WIDTH NO-BREAK SPACE", 2},
      {"a\xC2\xAD"
       "b",
       "U+00AD SOFT HYPHEN", 2},
      {"a\xC2\xA0"
       "b",
       "U+00A0 NO-BREAK SPACE", 2},
      {"a\tb", "U+0009 CHARACTER TABULATION", 2},
      {"a\x01"
       "b",
       "U+0001 (a control character)", 2},
      {"a\xEE\x80\x80", "U+E000 (a private-use character)", 2},
      {"a\xEF\xB7\x90", "U+FDD0 (a Unicode noncharacter)", 2},
      {"a\xF3\xA0\x84\x80", "U+E0100 (a character that renders as nothing)", 2},
      {"a\xFF"
       "b",
       "byte 0xFF (not valid UTF-8)", 2},
  };
  for (const auto& c : cases) {
    auto found = FindInvisible(c.text);
    if (c.describe.empty()) {
      EXPECT_FALSE(found) << EscapeInvisible(c.text) << ": " << found->Describe();
      continue;
    }
    ASSERT_TRUE(found) << EscapeInvisible(c.text);
    EXPECT_EQ(found->Describe(), c.describe);
    EXPECT_EQ(found->position, c.position) << c.describe;
  }
  // A caller that reports some characters itself passes over them.
  auto found = FindInvisible("a\tb\xE2\x80\xA8", [](char32_t c) { return c == '\t'; });
  ASSERT_TRUE(found);
  EXPECT_EQ(found->code_point, 0x2028u);
  EXPECT_EQ(found->position, 4u);
}

TEST(EscapeInvisible, EscapesOnlyWhatCannotBeSeen) {
  EXPECT_EQ(EscapeInvisible("caf\xC3\xA9 ok"), "caf\xC3\xA9 ok");
  EXPECT_EQ(EscapeInvisible("a\xE2\x80\xA8"
                            "b\xC2\xA0"
                            "c\x1B"
                            "d\xE2\x80\xAE"
                            "e"),
            "a\\u2028b\\u00A0c\\x1Bd\\u202Ee");
  EXPECT_EQ(EscapeInvisible("\n\r\t"), "\\n\\r\\t");
  EXPECT_EQ(EscapeInvisible("\xF3\xA0\x80\x81"), "\\U000E0001");
  EXPECT_EQ(EscapeInvisible("\xFF"), "\\xFF");
}

}  // namespace
}  // namespace switchboard::api
