// The codec against golden cases produced by Go's encoding/json itself
// (golden/gen.go -> testdata/codec_golden.json): every input must decode
// exactly when Go decodes it, and re-encode to the bytes Go writes.
#include "switchboard/pubsub/codec.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace switchboard::pubsub {
namespace {

nlohmann::json LoadGolden() {
  const char* src = std::getenv("SWITCHBOARD_SOURCE_DIR");
  std::string dir = src ? src : SWITCHBOARD_TEST_SOURCE_DIR;
  std::ifstream in(dir + "/tests/pubsub-runtime/testdata/codec_golden.json");
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

TEST(CodecGoldenTest, EveryGoCaseDecodesAndReencodesIdentically) {
  auto cases = LoadGolden();
  ASSERT_GE(cases.size(), 40u);
  int failures_checked = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c["name"].get<std::string>());
    auto input = c["input"].get<std::string>();
    auto decoded = DecodeMessage(input);
    ASSERT_EQ(decoded.ok(), c["ok"].get<bool>()) << input << "\n" << decoded.status().ToString();
    if (decoded.ok()) {
      EXPECT_EQ(EncodeMessage(*decoded), c["output"].get<std::string>());
      EXPECT_EQ(EncodedSize(*decoded), c["output"].get<std::string>().size());
    } else {
      ++failures_checked;
      EXPECT_EQ(decoded.status().code(), StatusCode::kInvalidArgument);
      EXPECT_FALSE(decoded.status().message().empty());
    }
  }
  EXPECT_GE(failures_checked, 20);
}

// Decoding into a reused message gives exactly what a fresh decode gives,
// whatever the previous message held.
TEST(CodecGoldenTest, DecodeIntoReusedMessageMatchesFreshDecode) {
  auto cases = LoadGolden();
  Message reused;
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& c : cases) {
      if (!c["ok"].get<bool>()) continue;
      SCOPED_TRACE(c["name"].get<std::string>());
      auto input = c["input"].get<std::string>();
      ASSERT_TRUE(DecodeMessageInto(input, &reused).ok());
      EXPECT_EQ(reused, *DecodeMessage(input));
    }
  }
}

Message TaskCompleted() {
  Message m;
  m.id = "task-completed";
  m.payloads = std::vector<std::string>{R"({"task_id":"abc","status":"COMPLETED"})"};
  m.tenant_id = "8f3b1c2d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
  m.retries = 3;
  return m;
}

// Encoding from a struct, compared with Go's bytes for the same struct.
TEST(CodecEncodeTest, MatchesGoForTheSameStruct) {
  EXPECT_EQ(
      EncodeMessage(TaskCompleted()),
      R"({"id":"task-completed","messages":["eyJ0YXNrX2lkIjoiYWJjIiwic3RhdHVzIjoiQ09NUExFVEVEIn0="],)"
      R"("tenant_id":"8f3b1c2d-4e5f-4a6b-8c7d-9e0f1a2b3c4d","immediately_expire":false,)"
      R"("persistent":false,"otel_carrier":null,"retries":3})");
}

TEST(CodecEncodeTest, CompressedAndPublishedAtOnlyWhenSet) {
  Message m;
  m.id = "t";
  m.compressed = true;
  m.published_at =
      Timestamp{.unix_seconds = 1796032800, .nanos = 123456789};  // 2026-11-30T10:00:00Z
  std::string json = EncodeMessage(m);
  EXPECT_NE(
      json.find(
          R"(,"retries":0,"compressed":true,"published_at":"2026-11-30T10:00:00.123456789Z"})"),
      std::string::npos)
      << json;
  m.compressed = false;
  m.published_at = Timestamp{};
  json = EncodeMessage(m);
  EXPECT_EQ(json.find("compressed"), std::string::npos);
  EXPECT_EQ(json.find("published_at"), std::string::npos);
}

TEST(CodecEncodeTest, EscapesLikeGo) {
  Message m;
  m.id = "<a href=\"x\">&amp;</a>\n\t\r\b\f" + std::string(1, '\0') + "\x1f\x7f\u2028\u2029é😀\\/";
  std::string json = EncodeMessage(m);
  EXPECT_NE(
      json.find(R"("id":"\u003ca href=\"x\"\u003e\u0026amp;\u003c/a\u003e\n\t\r\b\f\u0000\u001f)"
                "\x7f"
                R"(\u2028\u2029é😀\\/")"),
      std::string::npos)
      << json;
  m.id =
      "bad\xff\xfeutf8\xed\xa0\x80"
      "end";
  EXPECT_NE(EncodeMessage(m).find(R"("id":"bad\ufffd\ufffdutf8\ufffd\ufffd\ufffdend")"),
            std::string::npos);
}

TEST(CodecRoundTripTest, BinaryPayloadsOfEveryLengthSurvive) {
  Message m = TaskCompleted();
  m.payloads.emplace();
  for (int n = 0; n < 70; ++n) {
    std::string p;
    for (int i = 0; i < n; ++i) p.push_back(static_cast<char>((i * 37 + n) & 0xff));
    m.payloads->push_back(p);
  }
  m.otel_carrier = std::map<std::string, std::string>{{"traceparent", "00-1-2-01"}, {"é", "\"q\""}};
  m.published_at = Timestamp{.unix_seconds = 1700000000, .nanos = 5, .utc_offset_seconds = 3600};
  auto back = DecodeMessage(EncodeMessage(m));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, m);
}

TEST(CodecDecodeTest, ErrorsNameTheField) {
  struct Case {
    const char* json;
    const char* want;
  };
  const Case cases[] = {
      {R"({"retries":1.5})", "retries"},
      {R"({"messages":["%%%"]})", "messages[0]"},
      {R"({"tenant_id":"nope"})", "tenant_id"},
      {R"({"persistent":1})", "persistent"},
      {R"({"published_at":"yesterday"})", "published_at"},
      {R"({"id":"a")", "byte"},
  };
  for (const auto& c : cases) {
    auto r = DecodeMessage(c.json);
    ASSERT_FALSE(r.ok()) << c.json;
    EXPECT_NE(r.status().message().find(c.want), std::string::npos) << r.status().message();
  }
}

TEST(CodecDecodeTest, HostileInputNeverCrashes) {
  std::string deep(100000, '[');
  EXPECT_FALSE(DecodeMessage(R"({"x":)" + deep).ok());
  std::string deep_ok = R"({"x":)" + std::string(5000, '[') + std::string(5000, ']') + "}";
  EXPECT_TRUE(DecodeMessage(deep_ok).ok());
  std::string msg = EncodeMessage(TaskCompleted());
  for (size_t i = 0; i < msg.size(); ++i) {
    (void)DecodeMessage(msg.substr(0, i));  // every truncation: an error, never a crash
    std::string flipped = msg;
    flipped[i] = static_cast<char>(flipped[i] ^ 0x5a);
    (void)DecodeMessage(flipped);
  }
}

TEST(CodecDecodeTest, NullArraysStayNullAndEmptyStayEmpty) {
  auto r = DecodeMessage(R"({"messages":null,"otel_carrier":null})");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->payloads.has_value());
  EXPECT_FALSE(r->otel_carrier.has_value());
  r = DecodeMessage(R"({"messages":[],"otel_carrier":{}})");
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->payloads.has_value());
  EXPECT_TRUE(r->payloads->empty());
  EXPECT_TRUE(r->otel_carrier.has_value());
}

}  // namespace
}  // namespace switchboard::pubsub

namespace switchboard::pubsub {
namespace {

// The one documented difference from Go: a null element inside "messages"
// (Go's nil []byte, which Hatchet never sends) decodes to an empty payload
// and re-encodes as "" rather than null. No data is lost either way.
TEST(CodecDecodeTest, NullPayloadElementBecomesEmpty) {
  auto r = DecodeMessage(R"({"messages":[null,"YQ=="]})");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->payloads->size(), 2u);
  EXPECT_EQ((*r->payloads)[0], "");
  EXPECT_EQ((*r->payloads)[1], "a");
}

}  // namespace
}  // namespace switchboard::pubsub
