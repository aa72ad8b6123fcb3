#include "switchboard/common/base64.h"

#include <gtest/gtest.h>

#include <string>

namespace switchboard::base64 {
namespace {

TEST(Base64Test, MatchesRfc4648Vectors) {
  struct Case {
    std::string plain, encoded;
  } cases[] = {{"", ""},
               {"f", "Zg=="},
               {"fo", "Zm8="},
               {"foo", "Zm9v"},
               {"foob", "Zm9vYg=="},
               {"fooba", "Zm9vYmE="},
               {"foobar", "Zm9vYmFy"},
               {std::string("\xff\xfe\x00", 3), "//4A"},
               {std::string("\0\xff\xfe", 3), "AP/+"}};
  for (const auto& c : cases) {
    EXPECT_EQ(Encode(c.plain), c.encoded);
    auto d = Decode(std::string_view(c.encoded));
    ASSERT_TRUE(d.has_value()) << c.encoded;
    EXPECT_EQ(*d, c.plain);
  }
}

TEST(Base64Test, RejectsWhatGoRejects) {
  for (const char* bad : {"Zg=", "Z===", "Zm9v!A==", "=Zm9", "Zg==Zg==", "Zm9v YmFy", "Zm9-"}) {
    EXPECT_FALSE(Decode(std::string_view(bad)).has_value()) << bad;
  }
}

TEST(Base64Test, NewlinesAreSkippedExceptInStrictMode) {
  std::string out;
  EXPECT_TRUE(Decode("Zm9v\r\nYmFy", &out));
  EXPECT_EQ(out, "foobar");
  EXPECT_FALSE(DecodeStrict("Zm9v\nYmFy", &out));
  EXPECT_TRUE(DecodeStrict("Zm9vYmFy", &out));
  EXPECT_EQ(out, "foobar");
}

TEST(Base64Test, LargeInputsRoundTrip) {
  std::string data(1 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>((i * 131) & 0xff);
  std::string enc;
  EncodeTo(data, &enc);
  EXPECT_EQ(enc.size(), EncodedSize(data.size()));
  std::string dec;
  ASSERT_TRUE(Decode(enc, &dec));
  EXPECT_EQ(dec, data);
}

TEST(Base64UrlTest, MatchesRfc4648VectorsWithoutPadding) {
  struct Case {
    std::string plain, encoded;
  } cases[] = {
      {"", ""},
      {"f", "Zg"},
      {"fo", "Zm8"},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg"},
      {std::string("\xff\xfe\x00", 3), "__4A"},
      {std::string("\0\xff\xfe", 3), "AP_-"},
      {R"({"typ":"JWT","alg":"ed25519-nkey"})", "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ"}};
  for (const auto& c : cases) {
    EXPECT_EQ(EncodeUrl(c.plain), c.encoded);
    auto d = DecodeUrl(std::string_view(c.encoded));
    ASSERT_TRUE(d.has_value()) << c.encoded;
    EXPECT_EQ(*d, c.plain);
  }
}

TEST(Base64UrlTest, RejectsPaddingTheStandardAlphabetAndImpossibleLengths) {
  for (const char* bad :
       {"Zg==", "Zm8=", "AP/+", "//4A", "Z", "Zm9vY", "Zm9v\nYg", "Zm 9", "Zm9v!"}) {
    EXPECT_FALSE(DecodeUrl(std::string_view(bad)).has_value()) << bad;
  }
}

}  // namespace
}  // namespace switchboard::base64
