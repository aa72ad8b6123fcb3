// `switchboard validate` as users run it: the real binary as a subprocess,
// its exit codes, and every output format parsed back.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "switchboard/testing/process.h"
#include "switchboard/testing/temp_dir.h"

namespace {

using nlohmann::json;
using switchboard::testing::RunResult;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}
std::string Bin() { return Env("SWITCHBOARD_BINARY_DIR") + "/bin/switchboard"; }
std::string Data(const std::string& name) {
  return Env("SWITCHBOARD_SOURCE_DIR") + "/tests/cli/testdata/" + name;
}

RunResult Validate(std::vector<std::string> args, const std::string& stdin_data = "") {
  args.insert(args.begin(), {Bin(), "validate"});
  return switchboard::testing::Run(args, {}, stdin_data);
}

size_t Count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

TEST(ValidateCli, ValidFilePassesWithExitZero) {
  auto r = Validate({Data("valid.yaml")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("4 resource(s) checked in 1 file(s): 0 invalid"), std::string::npos)
      << r.out;
}

TEST(ValidateCli, InvalidFileNamesFileLineFieldAndFix) {
  auto r = Validate({Data("invalid.yaml")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  // The offending document starts at line 9 (after a comment on line 8).
  EXPECT_NE(
      r.out.find(Data("invalid.yaml") +
                 ":9: error: PubSubBackend team-a/broken: spec.nats.subjectPrefix: token 2 is "
                 "empty in \"hatchet..prod\"; use non-empty dot-separated tokens"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("INVALID"), std::string::npos);
}

TEST(ValidateCli, UsageErrorsExitTwo) {
  EXPECT_EQ(Validate({}).exit_code, 2);
  auto unknown = Validate({"--nope", Data("valid.yaml")});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown flag --nope"), std::string::npos) << unknown.err;
  auto format = Validate({"-o", "xml", Data("valid.yaml")});
  EXPECT_EQ(format.exit_code, 2);
  EXPECT_NE(format.err.find("text, json, junit, tap or sarif"), std::string::npos);
  EXPECT_EQ(Validate({"-o"}).exit_code, 2);
  EXPECT_EQ(Validate({"-", "-"}).exit_code, 2);
}

TEST(ValidateCli, Help) {
  auto r = Validate({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Usage: switchboard validate"), std::string::npos);
  EXPECT_NE(r.out.find("Exit codes"), std::string::npos);
}

TEST(ValidateCli, MissingFileIsAnIoErrorExitTwo) {
  auto r = Validate({Data("valid.yaml"), "/nonexistent/manifests"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("/nonexistent/manifests: error: no such file or directory"),
            std::string::npos)
      << r.out;
}

TEST(ValidateCli, SyntaxErrorIsInvalidWithLine) {
  auto r = Validate({Data("syntax-error.yaml")});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("syntax-error\\.yaml:[0-9]+: error: YAML: ")))
      << r.out;
}

TEST(ValidateCli, Stdin) {
  auto r = Validate({"-"}, switchboard::testing::ReadFile(Data("invalid.yaml")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("<stdin>:9: error:"), std::string::npos) << r.out;
  auto ok = Validate({"-o", "json", "-"}, switchboard::testing::ReadFile(Data("valid.yaml")));
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
}

TEST(ValidateCli, JsonOutput) {
  auto r = Validate({"-o", "json", Data("invalid.yaml"), Data("tree/server.yml")});
  EXPECT_EQ(r.exit_code, 1);
  json doc = json::parse(r.out);
  EXPECT_EQ(doc["valid"], false);
  EXPECT_EQ(doc["summary"]["files"], 2);
  EXPECT_EQ(doc["summary"]["checked"], 3);
  EXPECT_EQ(doc["summary"]["invalid"], 1);
  EXPECT_EQ(doc["summary"]["skipped"], 1);
  ASSERT_EQ(doc["resources"].size(), 3u);
  const json& broken = doc["resources"][1];
  EXPECT_EQ(broken["name"], "broken");
  EXPECT_EQ(broken["line"], 9);
  EXPECT_EQ(broken["valid"], false);
  EXPECT_EQ(broken["errors"][0]["field"], "spec.nats.subjectPrefix");
  EXPECT_EQ(broken["errors"][0]["rule"], "subject-prefix");
  EXPECT_EQ(doc["skipped"][0]["kind"], "ConfigMap");
}

TEST(ValidateCli, JunitOutput) {
  auto r = Validate({"-o=junit", Data("invalid.yaml"), Data("tree/server.yml")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out.rfind("<?xml", 0), 0u);
  EXPECT_NE(r.out.find("<testsuite name=\"switchboard validate\" tests=\"4\" failures=\"1\" "
                       "errors=\"0\" skipped=\"1\">"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(Count(r.out, "<testcase "), 4u);
  EXPECT_EQ(Count(r.out, "<failure "), 1u);
  EXPECT_EQ(Count(r.out, "<skipped "), 1u);
  EXPECT_NE(r.out.find("hatchet..prod"), std::string::npos);
  EXPECT_NE(r.out.find("&quot;hatchet..prod&quot;"), std::string::npos) << "XML escaping";
  EXPECT_EQ(Count(r.out, "<testsuite "), Count(r.out, "</testsuite>"));
}

TEST(ValidateCli, TapOutput) {
  auto r = Validate({"--output", "tap", Data("invalid.yaml"), Data("tree/server.yml")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out.rfind("TAP version 13\n1..4\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\nok 1 - "), std::string::npos);
  EXPECT_NE(r.out.find("\nnot ok 2 - "), std::string::npos);
  EXPECT_NE(r.out.find("# SKIP not a Switchboard kind"), std::string::npos);
  EXPECT_EQ(Count(r.out, "\nok ") + Count(r.out, "\nnot ok "), 4u);
}

TEST(ValidateCli, SarifOutput) {
  auto r = Validate({"-osarif", Data("invalid.yaml")});
  EXPECT_EQ(r.exit_code, 1);
  json doc = json::parse(r.out);
  EXPECT_EQ(doc["version"], "2.1.0");
  const json& run = doc["runs"][0];
  EXPECT_EQ(run["tool"]["driver"]["name"], "switchboard");
  ASSERT_GE(run["results"].size(), 1u);
  const json& res = run["results"][0];
  EXPECT_EQ(res["level"], "error");
  EXPECT_EQ(res["ruleId"], "subject-prefix");
  EXPECT_EQ(res["locations"][0]["physicalLocation"]["region"]["startLine"], 9);
  EXPECT_EQ(run["tool"]["driver"]["rules"][res["ruleIndex"].get<int>()]["id"], "subject-prefix");
}

TEST(ValidateCli, StrictFailsOnWarnings) {
  auto relaxed = Validate({Data("warning-only.yaml")});
  EXPECT_EQ(relaxed.exit_code, 0) << relaxed.out;
  EXPECT_NE(relaxed.out.find(": warning: NatsServer nats/big: spec.maxPayload:"), std::string::npos)
      << relaxed.out;
  auto strict = Validate({"--strict", Data("warning-only.yaml")});
  EXPECT_EQ(strict.exit_code, 1) << strict.out;
  auto json_strict = Validate({"--strict", "-o", "json", Data("warning-only.yaml")});
  EXPECT_EQ(json::parse(json_strict.out)["valid"], false);
}

TEST(ValidateCli, DirectoryRecursionAndCrossFileRules) {
  auto r = Validate({"-v", Data("tree")});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  // b.json and a.yaml (sorted: nested/a.yaml, nested/b.json, server.yml) share a prefix.
  // Neither is stored (no creationTimestamp): the smaller namespace/name,
  // team-a/a, keeps it and only team-b/b is refused.
  EXPECT_EQ(Count(r.out, "error: PubSubBackend"), 1u) << r.out;
  EXPECT_NE(r.out.find("error: PubSubBackend team-b/b: spec.nats.subjectPrefix: \"same.prefix\" "
                       "is already used on NatsServer nats/shared by PubSubBackend team-a/a"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("skipped: ConfigMap nats/unrelated"), std::string::npos);
  EXPECT_NE(r.out.find("ok: NatsServer nats/shared"), std::string::npos);
  EXPECT_NE(r.out.find("in 3 file(s)"), std::string::npos) << "notes.txt must be ignored";
}

TEST(ValidateCli, JsonListItemsCarryTheirLines) {
  auto r = Validate({"-o", "json", Data("list.json")});
  EXPECT_EQ(r.exit_code, 1);
  json doc = json::parse(r.out);
  ASSERT_EQ(doc["resources"].size(), 2u);
  EXPECT_EQ(doc["resources"][0]["line"], 5);
  EXPECT_EQ(doc["resources"][1]["line"], 8);
  EXPECT_EQ(doc["resources"][1]["item"], 1);
  EXPECT_EQ(doc["resources"][1]["errors"][0]["field"], "spec.postgres.minConns");
}

TEST(ValidateCli, ContextObjectsAndUpdates) {
  switchboard::testing::TempDir dir;
  std::string existing = dir.WriteFile("cluster.yaml", R"(
apiVersion: pubsub.switchboard.dev/v1alpha1
kind: NatsServer
metadata: {name: shared, namespace: nats}
spec: {url: "nats://n:4222", allowedNamespaces: {from: All}}
---
apiVersion: pubsub.switchboard.dev/v1alpha1
kind: PubSubBackend
metadata: {name: old, namespace: team-x}
spec: {kind: nats, nats: {serverRef: {name: shared, namespace: nats}, subjectPrefix: taken}}
)");
  std::string clash = dir.WriteFile("in/clash.yaml", R"(
apiVersion: pubsub.switchboard.dev/v1alpha1
kind: PubSubBackend
metadata: {name: new, namespace: team-y}
spec: {kind: nats, nats: {serverRef: {name: shared, namespace: nats}, subjectPrefix: taken}}
)");
  auto r = Validate({"--context", existing, clash});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("by PubSubBackend team-x/old"), std::string::npos) << r.out;
  // Without the context there is nothing to clash with (only a warning: no server).
  EXPECT_EQ(Validate({clash}).exit_code, 0);

  std::string update = dir.WriteFile("in/update.yaml", R"(
apiVersion: pubsub.switchboard.dev/v1alpha1
kind: PubSubBackend
metadata: {name: old, namespace: team-x}
spec: {kind: nats, nats: {serverRef: {name: shared, namespace: nats}, subjectPrefix: moved}}
)");
  auto u = Validate({"--context=" + existing, update});
  EXPECT_EQ(u.exit_code, 0) << u.out;
  EXPECT_NE(u.out.find("spec.nats.subjectPrefix: changes from \"taken\" to \"moved\""),
            std::string::npos)
      << u.out;
}

TEST(ValidateCli, DefaultNamespaceFlag) {
  std::string doc = R"(
apiVersion: pubsub.switchboard.dev/v1alpha1
kind: PubSubBackend
metadata: {name: p}
spec: {kind: postgres, postgres: {}}
)";
  auto r = Validate({"-o", "json", "-n", "team-q", "-"}, doc);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(json::parse(r.out)["resources"][0]["namespace"], "team-q");
}

TEST(ValidateCli, DuplicateDefinitionsWarn) {
  auto r = Validate({Data("valid.yaml"), Data("valid.yaml")});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("defined again (first at"), std::string::npos) << r.out;
}

TEST(ValidateCli, NonObjectDocumentIsInvalid) {
  auto r = Validate({"-"}, "- just\n- a list\n");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("not a Kubernetes object"), std::string::npos);
}

}  // namespace

namespace {

// Same verdict as the API server: the CRD samples pass, and every manifest
// the end-to-end tests expect `kubectl apply` to refuse is refused offline.
TEST(ValidateCli, AgreesWithTheCrdSamplesAndTheE2eInvalidManifests) {
  std::string samples = Env("SWITCHBOARD_SOURCE_DIR") + "/crds/samples";
  std::string invalid = Env("SWITCHBOARD_SOURCE_DIR") + "/tests/e2e/testdata/invalid";
  if (!std::filesystem::exists(samples) || !std::filesystem::exists(invalid)) {
    GTEST_SKIP() << "crds/samples or tests/e2e/testdata/invalid not in this checkout";
  }
  auto ok = Validate({samples});
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  auto bad = Validate({"-o", "json", invalid});
  EXPECT_EQ(bad.exit_code, 1);
  json doc = json::parse(bad.out);
  ASSERT_GT(doc["resources"].size(), 0u);
  for (const auto& r : doc["resources"]) {
    EXPECT_EQ(r["valid"], false) << r["file"] << " was accepted";
  }
}

namespace switchboard_validate_inputs {

using switchboard::testing::TempDir;

const char* kBackendJson = R"({"apiVersion": "pubsub.switchboard.dev/v1alpha1",
 "kind": "PubSubBackend",
 "metadata": {"name": "hatchet", "namespace": "team-a"},
 "spec": {"kind": "nats", "nats": {"serverRef": {"name": "shared"},
  "subjectPrefix": "hatchet.a", "subjectPrefix": "hatchet.b"}}}
)";

TEST(ValidateCli, NothingToValidateIsAnErrorUnlessAllowed) {
  TempDir dir;
  std::string empty = dir.WriteFile("empty.yaml", "");
  std::string other =
      dir.WriteFile("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n");
  std::filesystem::create_directories(dir.path() + "/nothing");
  dir.WriteFile("nothing/notes.txt", "not a manifest\n");
  struct Case {
    std::vector<std::string> args;
    std::string stdin_data;
    std::string says;
  };
  for (const auto& c : std::vector<Case>{
           {{empty}, "", "empty.yaml): no documents (empty)"},
           {{"-"}, "", "(<stdin>): no documents"},
           {{"-"}, "# just a comment\n---\n", "(<stdin>): no documents"},
           {{dir.path() + "/nothing"}, "", "no *.yaml, *.yml or *.json file in"},
           {{other}, "", "1 document(s), of other kinds (ConfigMap)"},
       }) {
    auto r = Validate(c.args, c.stdin_data);
    EXPECT_EQ(r.exit_code, 1) << c.says << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("no PubSubBackend or NatsServer found"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--allow-empty"), std::string::npos) << r.out;
    auto args = c.args;
    args.insert(args.begin(), "--allow-empty");
    auto allowed = Validate(args, c.stdin_data);
    EXPECT_EQ(allowed.exit_code, 0) << c.says << "\n" << allowed.out;
  }
  // Machine-readable formats carry it as a failure too.
  auto junit = Validate({"-o", "junit", empty});
  EXPECT_EQ(junit.exit_code, 1);
  EXPECT_NE(junit.out.find("no PubSubBackend or NatsServer found"), std::string::npos);
}

TEST(ValidateCli, DuplicateJsonKeysAreAnErrorWithKeyAndLine) {
  TempDir dir;
  std::string file = dir.WriteFile("dup.json", kBackendJson);
  auto r = Validate({file});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find(file + ":5: error: JSON: duplicate key \"subjectPrefix\" (first at line 5)"),
            std::string::npos)
      << r.out;
  // As in YAML.
  std::string yaml =
      dir.WriteFile("dup.yaml", "kind: PubSubBackend\nspec:\n  kind: nats\n  kind: x\n");
  auto y = Validate({yaml});
  EXPECT_EQ(y.exit_code, 1);
  EXPECT_NE(y.out.find(yaml + ":4: error: YAML: mapping key \"kind\" already defined"),
            std::string::npos)
      << y.out;
}

TEST(ValidateCli, YamlFlowStyleErrorsSayYaml) {
  TempDir dir;
  std::string file =
      dir.WriteFile("flow.yaml", "{kind: PubSubBackend, spec: " + std::string(300, '[') +
                                     std::string(300, ']') + "}\n");
  auto r = Validate({file});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find(file + ":1: error: YAML: nesting deeper than"), std::string::npos) << r.out;
}

TEST(ValidateCli, SarifUrisArePercentEncoded) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() + "/my dir");
  std::string file =
      dir.WriteFile("my dir/a b#1.yaml", switchboard::testing::ReadFile(Data("invalid.yaml")));
  auto r = Validate({"-o", "sarif", file});
  EXPECT_EQ(r.exit_code, 1);
  json doc = json::parse(r.out);
  std::string uri =
      doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"];
  EXPECT_NE(uri.find("/my%20dir/a%20b%231.yaml"), std::string::npos) << uri;
  EXPECT_EQ(uri.find(' '), std::string::npos) << uri;
}

TEST(ValidateCli, TextOutputEscapesInvisibleCharacters) {
  TempDir dir;
  // A name with a line separator, a no-break space, an escape and a bidi
  // override: each must show as an escape, none may reach the log raw.
  std::string file =
      dir.WriteFile("odd.json",
                    R"({"apiVersion": "pubsub.switchboard.dev/v1alpha1", "kind": "PubSubBackend",
 "metadata": {"name": "a\u2028b\u00a0c\u001bd\u202ee", "namespace": "team-a"},
 "spec": {"kind": "nats", "nats": {"serverRef": {"name": "s"}, "subjectPrefix": "x"}}})");
  auto r = Validate({file});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  for (const char* escaped : {"a\\u2028b\\u00A0c\\x1Bd\\u202Ee"}) {
    EXPECT_NE(r.out.find(escaped), std::string::npos) << r.out;
  }
  for (const char* raw : {"\xE2\x80\xA8", "\xC2\xA0", "\x1B", "\xE2\x80\xAE"}) {
    EXPECT_EQ(r.out.find(raw), std::string::npos) << "raw bytes in:\n" << r.out;
  }
  // One line per finding: the separator did not start a new one.
  for (size_t p = r.out.find('\n'), start = 0; p != std::string::npos;
       start = p + 1, p = r.out.find('\n', start)) {
    std::string line = r.out.substr(start, p - start);
    EXPECT_TRUE(line.rfind(file, 0) == 0 || line.find("resource(s) checked") != std::string::npos)
        << line;
  }
}

}  // namespace switchboard_validate_inputs
}  // namespace
