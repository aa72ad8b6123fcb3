// Typed errors from API server answers, Warning headers, watch stream decoding.
#include <gtest/gtest.h>

#include "switchboard/kube/request.h"
#include "switchboard/kube/watch.h"

namespace switchboard::kube {
namespace {

std::string StatusBody(int code, const std::string& reason, const std::string& message) {
  return json{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
              {"reason", reason}, {"message", message}, {"code", code}}
      .dump();
}

TEST(StatusFromResponse, ReasonTable) {
  struct Case {
    int http;
    std::string reason;
    StatusCode want;
  };
  const Case cases[] = {
      {404, "NotFound", StatusCode::kNotFound},
      {409, "AlreadyExists", StatusCode::kAlreadyExists},
      {409, "Conflict", StatusCode::kConflict},
      {422, "Invalid", StatusCode::kInvalidArgument},
      {400, "BadRequest", StatusCode::kInvalidArgument},
      {403, "Forbidden", StatusCode::kPermissionDenied},
      {401, "Unauthorized", StatusCode::kUnauthenticated},
      {410, "Gone", StatusCode::kGone},
      {410, "Expired", StatusCode::kGone},
      {504, "Timeout", StatusCode::kTimeout},
      {500, "ServerTimeout", StatusCode::kTimeout},
      {429, "TooManyRequests", StatusCode::kResourceExhausted},
      {503, "ServiceUnavailable", StatusCode::kUnavailable},
      {500, "InternalError", StatusCode::kInternal},
      {415, "UnsupportedMediaType", StatusCode::kInvalidArgument},
      // Unknown reasons fall back to the HTTP code.
      {404, "", StatusCode::kNotFound},
      {409, "SomethingNew", StatusCode::kConflict},
      {410, "", StatusCode::kGone},
      {503, "", StatusCode::kUnavailable},
  };
  for (const auto& c : cases) {
    Status s = StatusFromResponse(c.http, StatusBody(c.http, c.reason, "the server said so"));
    EXPECT_EQ(s.code(), c.want) << c.http << " " << c.reason;
    EXPECT_EQ(s.message(), "the server said so");
  }
}

TEST(StatusFromResponse, SuccessAndNonStatusBodies) {
  EXPECT_TRUE(StatusFromResponse(200, "{}").ok());
  EXPECT_TRUE(StatusFromResponse(201, "").ok());
  Status s = StatusFromResponse(502, "<html>bad gateway</html>\n");
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "HTTP 502: <html>bad gateway</html>");
  EXPECT_EQ(StatusFromResponse(403, "").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(StatusFromResponse(418, "teapot").code(), StatusCode::kInternal);
}

TEST(StatusFromStatusObject, WatchErrorPayload) {
  json s = {{"kind", "Status"},
            {"status", "Failure"},
            {"message", "too old resource version: 1 (100)"},
            {"reason", "Expired"},
            {"code", 410}};
  Status st = StatusFromStatusObject(s);
  EXPECT_EQ(st.code(), StatusCode::kGone);
  EXPECT_EQ(st.message(), "too old resource version: 1 (100)");
  json gone_code_only = {{"kind", "Status"}, {"code", 410}, {"message", "m"}};
  EXPECT_EQ(StatusFromStatusObject(gone_code_only).code(), StatusCode::kGone);
}

TEST(ParseWarningHeader, Table) {
  struct Case {
    std::string in;
    std::vector<std::string> want;
  };
  const Case cases[] = {
      {R"(299 - "unknown field \"spec.foo\"")", {R"(unknown field "spec.foo")"}},
      {R"(299 - "a, with comma", 299 - "second")", {"a, with comma", "second"}},
      {R"(299 - "dated" "Sat, 25 Aug 2012 23:34:45 GMT", 299 - "next")", {"dated", "next"}},
      {"plain text", {"plain text"}},
      {"", {}},
  };
  for (const auto& c : cases) EXPECT_EQ(ParseWarningHeader(c.in), c.want) << c.in;
}

TEST(ParseWatchEvent, Types) {
  auto a = ParseWatchEvent(R"({"type":"ADDED","object":{"metadata":{"name":"x"}}})");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->type, WatchEventType::kAdded);
  EXPECT_EQ(NameOf(a->object), "x");
  auto b = ParseWatchEvent(R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}})");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->type, WatchEventType::kBookmark);
  EXPECT_EQ(ResourceVersionOf(b->object), "9");
  auto e = ParseWatchEvent(
      R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired","message":"too old"}})");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->type, WatchEventType::kError);
  EXPECT_EQ(e->error.code(), StatusCode::kGone);
  EXPECT_FALSE(ParseWatchEvent("not json").ok());
  EXPECT_FALSE(ParseWatchEvent(R"({"type":"EXPLODED","object":{}})").ok());
  EXPECT_EQ(WatchEventTypeName(WatchEventType::kModified), "MODIFIED");
}

TEST(WatchLineDecoder, SplitsAcrossChunks) {
  WatchLineDecoder d;
  std::vector<std::string> lines;
  auto collect = [&](std::string_view l) {
    lines.emplace_back(l);
    return true;
  };
  EXPECT_TRUE(d.Feed("{\"a\":", collect));
  EXPECT_TRUE(lines.empty());
  EXPECT_TRUE(d.Feed("1}\n{\"b\":2}\r\n\n{\"c\"", collect));
  EXPECT_EQ(lines, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}"}));
  EXPECT_EQ(d.buffered(), 4u);
  EXPECT_TRUE(d.Feed(":3}\n", collect));
  EXPECT_EQ(lines.back(), "{\"c\":3}");
  EXPECT_EQ(d.buffered(), 0u);
}

TEST(WatchLineDecoder, StopsWhenAsked) {
  WatchLineDecoder d;
  int n = 0;
  EXPECT_FALSE(d.Feed("1\n2\n3\n", [&](std::string_view) { return ++n < 2; }));
  EXPECT_EQ(n, 2);
}

}  // namespace
}  // namespace switchboard::kube
