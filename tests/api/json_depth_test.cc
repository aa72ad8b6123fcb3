#include "switchboard/api/json_depth.h"

#include <gtest/gtest.h>

#include <string>

#include "switchboard/api/documents.h"

namespace switchboard::api {
namespace {

TEST(JsonDepth, CountsBracketsOutsideStrings) {
  EXPECT_TRUE(NestingWithin("{\"a\":[{}]}", 3));
  EXPECT_FALSE(NestingWithin("{\"a\":[{}]}", 2));
  EXPECT_TRUE(NestingWithin("{\"a\":\"[[[[[[\"}", 1));
  EXPECT_TRUE(NestingWithin("{\"a\":\"\\\"[[[\"}", 1));  // escaped quote stays in the string
}

TEST(JsonDepth, NamesTheBracketThatGoesTooDeep) {
  EXPECT_EQ(FindNestingBeyond("[[[]]]", 2), 2u);
  EXPECT_EQ(FindNestingBeyond("[[]][[]]", 2), std::string_view::npos);  // a stream of values
  // A stray closing bracket does not buy a later value a level.
  EXPECT_EQ(FindNestingBeyond("[]][[[]]]", 2), 5u);
}

// The manifest loader and the webhook share this bound: the loader's error
// names the line of the bracket that goes too deep, and keeps the documents
// before it.
TEST(JsonDepth, TheLoaderStopsAtTheSameBracket) {
  std::string text = "{\"a\": 1}\n{\"b\":\n" + std::string(5, '[') + std::string(5, ']') + "}";
  LoadOptions options;
  options.max_depth = 4;
  auto r = LoadDocuments(text, options);
  EXPECT_FALSE(r.status.ok());
  EXPECT_EQ(r.status.message(), "JSON: nesting deeper than 4 levels");
  EXPECT_EQ(r.error_line, 3);
  EXPECT_EQ(r.documents.size(), 1u);
  options.max_depth = 6;
  EXPECT_TRUE(LoadDocuments(text, options).status.ok());
}

}  // namespace
}  // namespace switchboard::api
