// The one check of each value (api/values.h): cases at each boundary.
#include "switchboard/api/values.h"

#include <gtest/gtest.h>

#include <string>

#include "switchboard/api/limits.h"

namespace switchboard::api {
namespace {

struct Case {
  std::string value;
  bool ok;
  std::string contains = "";  // in the message when !ok
};

TEST(ValuesTest, Username) {
  const std::string at_max(kMaxUsernameLength, 'a');
  const Case cases[] = {
      {"a", true},
      {"team-a-hatchet", true},
      {"A.b_c-9", true},
      {"0lead", true},
      {at_max, true},
      {at_max + "a", false, "1-200 letters"},
      {"", false, "not a valid NATS user name"},
      {"-lead", false, "starting with a letter or digit"},
      {".lead", false, "starting with a letter or digit"},
      {"a@b", false, "not a valid NATS user name"},  // the render's old alphabet admitted @+=
      {"a+b", false, "not a valid NATS user name"},
      {"a=b", false, "not a valid NATS user name"},
      {"a b", false, "not a valid NATS user name"},
      {"a\"b", false, "\\\""},
      {"a\u2028b", false, "U+2028 LINE SEPARATOR"},
      {"a\xffz", false, "not valid UTF-8"},
  };
  for (const auto& c : cases) {
    std::string err = CheckUsername(c.value);
    EXPECT_EQ(err.empty(), c.ok) << c.value << ": " << err;
    if (!c.ok) {
      EXPECT_NE(err.find(c.contains), std::string::npos) << c.value << ": " << err;
    }
  }
}

TEST(ValuesTest, RenderedUsernameAllowsTheRotationSuffix) {
  const std::string spec_max(kMaxUsernameLength, 'a');
  EXPECT_EQ(CheckRenderedUsername(spec_max + "-r2147483647"), "");
  EXPECT_NE(CheckRenderedUsername(spec_max + "-r21474836470"), "");
  EXPECT_NE(CheckUsername(spec_max + "-r1"), "");
  EXPECT_NE(CheckRenderedUsername("a@b-r1"), "");
  EXPECT_NE(CheckRenderedUsername(""), "");
}

TEST(ValuesTest, SubjectPrefix) {
  const std::string at_max(kMaxSubjectPrefixLength, 'a');
  const Case cases[] = {
      {"hatchet.pubsub", true},
      {"a", true},
      {"a.b-c_d", true},
      {"caf\u00e9", true},  // visible UTF-8: NATS accepts it (the rules warn)
      {at_max, true},
      {at_max + "a", false, "more than 191"},
      {"", false, "must not be empty"},
      {".a", false, "start with a dot"},
      {"a.", false, "end with a dot"},
      {"a..b", false, "token 2 is empty"},
      {"a b", false, "whitespace"},
      {"a\tb", false, "whitespace"},
      {"a.*", false, "wildcard '*'"},
      {"a.>", false, "wildcard '>'"},
      {"a\"b", false, "'\"' or '\\'"},
      {"a\\b", false, "'\"' or '\\'"},
      {"$SYS.x", false, "reserved by NATS"},
      {"a\x01z", false, "U+0001"},
      {"a\u200bb", false, "U+200B"},
  };
  for (const auto& c : cases) {
    auto errors = SubjectPrefixErrors(c.value);
    EXPECT_EQ(errors.empty(), c.ok) << c.value;
    EXPECT_EQ(CheckSubjectPrefix(c.value), errors.empty() ? "" : errors.front());
    if (!c.ok) {
      bool found = false;
      for (const auto& e : errors) found = found || e.find(c.contains) != std::string::npos;
      EXPECT_TRUE(found) << c.value << ": " << CheckSubjectPrefix(c.value);
    }
  }
  // Every error is reported, not only the first.
  EXPECT_EQ(SubjectPrefixErrors(".a *").size(), 3u);
}

TEST(ValuesTest, MaxPayload) {
  struct {
    int64_t bytes;
    bool ok;
    std::string contains;
  } cases[] = {
      {kEngineMaxPayload, true, ""},
      {kEngineMaxPayload + 1, true, ""},
      {kNatsMaxPayloadLimit, true, ""},
      {kEngineMaxPayload - 1, false, "below 16Mi"},
      {0, false, "set at least 16Mi"},
      {-1, false, "below 16Mi"},
      {kNatsMaxPayloadLimit + 1, false, "set 16Mi to 64Mi"},
  };
  for (const auto& c : cases) {
    std::string err = CheckMaxPayload(c.bytes);
    EXPECT_EQ(err.empty(), c.ok) << c.bytes << ": " << err;
    if (!c.ok) {
      EXPECT_NE(err.find(c.contains), std::string::npos) << c.bytes << ": " << err;
    }
  }
}

TEST(ValuesTest, AllowedSubject) {
  EXPECT_EQ(AllowedSubject("hatchet.team-a"), "hatchet.team-a.*");
  EXPECT_EQ(AllowedSubject("x"), "x.*");
}

TEST(ValuesTest, QuoteEscapesAndCuts) {
  EXPECT_EQ(Quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(Quote("a\u2028b"), "\"a\\u2028b\"");
  EXPECT_EQ(Quote(std::string(81, 'x')), "\"" + std::string(80, 'x') + "...\"");
}

}  // namespace
}  // namespace switchboard::api
