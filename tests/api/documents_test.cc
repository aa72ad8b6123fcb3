#include "switchboard/api/documents.h"

#include <gtest/gtest.h>

#include <sstream>

namespace switchboard::api {
namespace {

using nlohmann::json;

TEST(Documents, MultiDocumentYamlWithLines) {
  auto r = LoadDocuments(
      "# leading comment\n"
      "apiVersion: v1\n"  // 2
      "kind: A\n"
      "---\n"
      "---\n"  // empty document: skipped
      "# c\n"
      "kind: B\n"  // 7
      "spec: {a: 1, b: [x, 2]}\n"
      "...\n"
      "---\n"
      "kind: C\n");  // 11
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.documents.size(), 3u);
  EXPECT_EQ(r.documents[0].line, 2);
  EXPECT_EQ(r.documents[1].line, 7);
  EXPECT_EQ(r.documents[2].line, 11);
  EXPECT_EQ(r.documents[1].value["spec"], (json{{"a", 1}, {"b", {"x", 2}}}));
  EXPECT_EQ(r.documents[1].index, 1);  // empty documents are not counted
}

TEST(Documents, ScalarsResolveLikeKubectl) {
  auto r = LoadDocuments(
      "a: 1\nb: \"1\"\nc: 1.5\nd: true\ne: yes\nf: null\ng: ~\nh: 0x10\ni: 'x'\nj: 16Mi\n"
      "k: -3\nl: 1e3\nm: |\n  text\nn: !!str 5\no: 99999999999999999999\np: off\n");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const json& v = r.documents[0].value;
  EXPECT_EQ(v["a"], 1);
  EXPECT_EQ(v["b"], "1");
  EXPECT_EQ(v["c"], 1.5);
  EXPECT_EQ(v["d"], true);
  EXPECT_EQ(v["e"], true);
  EXPECT_TRUE(v["f"].is_null());
  EXPECT_TRUE(v["g"].is_null());
  EXPECT_EQ(v["h"], 16);
  EXPECT_EQ(v["i"], "x");
  EXPECT_EQ(v["j"], "16Mi");
  EXPECT_EQ(v["k"], -3);
  EXPECT_EQ(v["l"], 1000.0);
  EXPECT_EQ(v["m"], "text\n");
  EXPECT_EQ(v["n"], "5");
  EXPECT_TRUE(v["o"].is_number());
  EXPECT_EQ(v["p"], false);
}

// JSON has no NaN or infinity: a document holding one could never reach
// the API server, so the loader refuses it, naming the line and the value.
TEST(Documents, NonFiniteNumbersAreRefusedNamingLineAndValue) {
  for (const char* value : {".nan", ".NAN", ".inf", "-.Inf", "+.INF", "1e400", "-1e999"}) {
    SCOPED_TRACE(value);
    auto r = LoadDocuments(std::string("apiVersion: v1\nspec:\n  maxPayload: ") + value + "\n");
    EXPECT_FALSE(r.status.ok());
    EXPECT_EQ(r.error_line, 3);
    EXPECT_NE(r.status.message().find(value), std::string::npos) << r.status.message();
    EXPECT_NE(r.status.message().find("not a finite number"), std::string::npos);
  }
  auto quoted = LoadDocuments("a: \".nan\"\nb: !!str .inf\n");
  ASSERT_TRUE(quoted.status.ok()) << quoted.status.message();
  EXPECT_EQ(quoted.documents[0].value["a"], ".nan");
  EXPECT_EQ(quoted.documents[0].value["b"], ".inf");
  auto json_overflow = LoadDocuments("{\"a\":\n  1e400}\n");
  EXPECT_FALSE(json_overflow.status.ok());
  EXPECT_EQ(json_overflow.error_line, 2);
}

TEST(Documents, AnchorsAliasesAndMergeKeys) {
  auto r = LoadDocuments(
      "base: &b {x: 1, y: 2}\n"
      "copy: *b\n"
      "merged:\n  <<: *b\n  y: 3\n");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const json& v = r.documents[0].value;
  EXPECT_EQ(v["copy"], (json{{"x", 1}, {"y", 2}}));
  EXPECT_EQ(v["merged"], (json{{"x", 1}, {"y", 3}}));
}

TEST(Documents, BillionLaughsIsRefused) {
  std::string y = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'k'; ++c) {
    y += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 10; ++i) y += std::string(i ? ", *" : "*") + static_cast<char>(c - 1);
    y += "]\n";
  }
  auto r = LoadDocuments(y);
  EXPECT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("aliases"), std::string::npos) << r.status.message();
}

TEST(Documents, DuplicateKeysAreAnError) {
  auto r = LoadDocuments("kind: A\nspec:\n  x: 1\n  x: 2\n");
  EXPECT_FALSE(r.status.ok());
  EXPECT_EQ(r.error_line, 4);
  EXPECT_NE(r.status.message().find("\"x\" already defined"), std::string::npos);
}

TEST(Documents, DuplicateJsonKeysAreAnErrorNamingKeyAndLine) {
  auto r = LoadDocuments(
      "{\"kind\": \"A\",\n \"spec\": {\"x\": 1,\n  \"y\": {\"x\": 0},\n  \"x\": 2}}\n");
  EXPECT_FALSE(r.status.ok());
  EXPECT_EQ(r.error_line, 4);
  EXPECT_NE(r.status.message().find("JSON: duplicate key \"x\" (first at line 2)"),
            std::string::npos)
      << r.status.message();
  // Spelt differently, the same key.
  auto escaped = LoadDocuments("{\"a\": 1, \"\\u0061\": 2}");
  EXPECT_FALSE(escaped.status.ok());
  EXPECT_NE(escaped.status.message().find("\"a\""), std::string::npos) << escaped.status.message();
  // The same key in different objects, and many distinct keys, are fine.
  EXPECT_TRUE(LoadDocuments("{\"name\": \"a\", \"spec\": {\"name\": \"b\"}}").status.ok());
  std::string wide = "{";
  for (int i = 0; i < 20000; ++i) wide += (i ? ",\"k" : "\"k") + std::to_string(i) + "\": 1";
  EXPECT_TRUE(LoadDocuments(wide + "}").status.ok());
  // A duplicate in the second document of a stream.
  auto second = LoadDocuments("{\"a\": 1}\n{\"b\": 1,\n\"b\": 2}");
  EXPECT_FALSE(second.status.ok());
  EXPECT_EQ(second.documents.size(), 1u);
  EXPECT_EQ(second.error_line, 3);
}

TEST(Documents, YamlFlowStyleIsYamlAndItsErrorsSaySo) {
  auto r = LoadDocuments("{apiVersion: v1, kind: ConfigMap, data: {a: 'b'}}\n");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.documents.size(), 1u);
  EXPECT_EQ(r.documents[0].value["data"]["a"], "b");
  auto deep = LoadDocuments("{spec: " + std::string(300, '[') + std::string(300, ']') + "}");
  EXPECT_FALSE(deep.status.ok());
  EXPECT_EQ(deep.status.message().rfind("YAML: nesting deeper", 0), 0u) << deep.status.message();
  // A misspelt JSON value is still a JSON error.
  auto typo = LoadDocuments("{\"a\": tru}");
  EXPECT_EQ(typo.status.message().rfind("JSON:", 0), 0u) << typo.status.message();
}

TEST(Documents, DroppedMetadataFieldsAreParsedButNotKept) {
  LoadOptions o;
  o.drop_metadata_fields = {"labels", "annotations", "managedFields"};
  const std::string yaml =
      "kind: A\nmetadata:\n  name: a\n  labels: {app: x, tier: web}\n"
      "  annotations:\n    note: [1, {deep: true}]\nspec:\n  labels: kept\n"
      "---\nkind: List\nitems:\n- kind: B\n  metadata: {name: b, annotations: {n: v}}\n";
  for (const std::string& text :
       {yaml, std::string("{\"kind\": \"A\", \"metadata\": {\"name\": \"a\", \"labels\": "
                          "{\"app\": \"x\"}, \"annotations\": {\"n\": [1, {\"d\": 2}]}}, "
                          "\"spec\": {\"labels\": \"kept\"}}\n"
                          "{\"kind\": \"List\", \"items\": [{\"kind\": \"B\", \"metadata\": "
                          "{\"name\": \"b\", \"annotations\": {\"n\": \"v\"}}}]}")}) {
    auto r = LoadDocuments(text, o);
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    ASSERT_EQ(r.documents.size(), 2u);
    const auto& a = r.documents[0].value;
    EXPECT_EQ(a["metadata"], (nlohmann::json{{"name", "a"}})) << a.dump();
    EXPECT_EQ(a["spec"]["labels"], "kept");
    EXPECT_EQ(r.documents[1].value["metadata"], (nlohmann::json{{"name", "b"}}));
  }
  // An anchor inside a dropped value is still there for its alias.
  auto r = LoadDocuments(
      "kind: A\nmetadata:\n  labels: &l {app: x, tier: web}\nspec:\n  selector: *l\n", o);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.documents[0].value["spec"]["selector"],
            (nlohmann::json{{"app", "x"}, {"tier", "web"}}));
  // Duplicate keys inside dropped values, or of a dropped key, are errors.
  for (const std::string& bad :
       {std::string("kind: A\nmetadata:\n  labels:\n    a: 1\n    a: 2\n"),
        std::string("kind: A\nmetadata:\n  labels: {}\n  labels: {}\n"),
        std::string("{\"kind\": \"A\", \"metadata\": {\"labels\": {\"a\": 1,\n\"a\": 2}}}")}) {
    auto d = LoadDocuments(bad, o);
    EXPECT_FALSE(d.status.ok()) << bad;
    EXPECT_GE(d.error_line, 2) << bad;
  }
}

// With a sink, each document is handed over once, in order, even when the
// YAML loader has to read the text again (an anchor inside a dropped value
// in the second document) or a JSON-looking text turns out to be YAML flow
// style after a first value.
TEST(Documents, SinkGetsEachDocumentOnce) {
  LoadOptions o;
  o.drop_metadata_fields = {"labels"};
  auto names = [&](const std::string& text) {
    std::vector<std::string> seen;
    auto r = LoadDocuments(text, o, [&](Document&& d) {
      seen.push_back(d.value["metadata"]["name"].get<std::string>() + "@" + std::to_string(d.line));
    });
    EXPECT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_TRUE(r.documents.empty());
    return seen;
  };
  EXPECT_EQ(names("metadata: {name: a}\n---\nmetadata:\n  name: b\n  labels: &l {x: y}\n"
                  "spec: {selector: *l}\n---\nmetadata: {name: c}\n"),
            (std::vector<std::string>{"a@1", "b@3", "c@8"}));
  // JSON at first, YAML flow style further on: the JSON reading emits
  // nothing, the YAML reading reports the error (two values, no `---`).
  int emitted = 0;
  auto r = LoadDocuments("{\"metadata\": {\"name\": \"a\"}}\n{metadata: {name: b}}\n", o,
                         [&](Document&&) { ++emitted; });
  EXPECT_LE(emitted, 1);
  EXPECT_FALSE(r.status.ok());
  EXPECT_EQ(r.status.message().rfind("YAML:", 0), 0u) << r.status.message();
}

TEST(Documents, SyntaxErrorKeepsEarlierDocumentsAndNamesTheLine) {
  auto r = LoadDocuments("kind: A\n---\nkind: B\n  bad: [\n");
  EXPECT_FALSE(r.status.ok());
  EXPECT_EQ(r.documents.size(), 1u);
  EXPECT_GE(r.error_line, 3);
  EXPECT_NE(r.status.message().find("YAML"), std::string::npos);
}

TEST(Documents, ListKindExpandsWithItemLines) {
  auto r = LoadDocuments(
      "apiVersion: v1\n"
      "kind: List\n"
      "items:\n"
      "- kind: A\n"  // 4
      "  metadata: {name: a}\n"
      "- kind: B\n");  // 6
  ASSERT_TRUE(r.status.ok());
  ASSERT_EQ(r.documents.size(), 2u);
  EXPECT_EQ(r.documents[0].line, 4);
  EXPECT_EQ(r.documents[1].line, 6);
  EXPECT_EQ(r.documents[1].item, 1);
  EXPECT_EQ(r.documents[1].value["kind"], "B");
  LoadOptions keep;
  keep.expand_lists = false;
  EXPECT_EQ(LoadDocuments("kind: List\nitems: [{a: 1}]\n", keep).documents.size(), 1u);
}

TEST(Documents, JsonDocumentsAndLists) {
  auto r = LoadDocuments(
      "{\"kind\": \"A\"}\n"
      "\n"
      "{\"kind\": \"List\", \"items\": [\n"         // 3
      "  {\"kind\": \"B\", \"x\": \"a]}\\\"\"},\n"  // 4: brackets inside strings
      "  {\"kind\": \"C\"}\n"                       // 5
      "]}\n");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.documents.size(), 3u);
  EXPECT_EQ(r.documents[0].line, 1);
  EXPECT_EQ(r.documents[1].line, 4);
  EXPECT_EQ(r.documents[1].value["x"], "a]}\"");
  EXPECT_EQ(r.documents[2].line, 5);
  EXPECT_EQ(r.documents[2].value["kind"], "C");
}

TEST(Documents, JsonErrorsNameTheLine) {
  auto r = LoadDocuments("{\"a\": 1}\n{\"b\":\n  tru}\n");
  EXPECT_FALSE(r.status.ok());
  EXPECT_EQ(r.documents.size(), 1u);
  EXPECT_EQ(r.error_line, 3);
  auto unclosed = LoadDocuments("{\"a\": [1, 2}");
  EXPECT_FALSE(unclosed.status.ok());
  auto deep = LoadDocuments(std::string(1000, '[') + std::string(1000, ']'));
  EXPECT_FALSE(deep.status.ok());
  EXPECT_NE(deep.status.message().find("nesting"), std::string::npos);
}

TEST(Documents, DeepYamlNestingIsRefused) {
  auto r = LoadDocuments(std::string(1000, '[') + std::string(1000, ']'));
  EXPECT_FALSE(r.status.ok());
}

TEST(Documents, EmptyInputs) {
  EXPECT_TRUE(LoadDocuments("").documents.empty());
  EXPECT_TRUE(LoadDocuments("# only a comment\n").documents.empty());
  EXPECT_TRUE(LoadDocuments("---\n---\n").status.ok());
  EXPECT_TRUE(LoadDocuments("\xEF\xBB\xBF{\"a\":1}").status.ok());
}

TEST(Documents, ReadHelpers) {
  EXPECT_EQ(ReadFileText("/nonexistent/x.yaml").status().code(), StatusCode::kNotFound);
  std::istringstream in("kind: A\n");
  EXPECT_EQ(*ReadStreamText(in), "kind: A\n");
}

}  // namespace
}  // namespace switchboard::api
