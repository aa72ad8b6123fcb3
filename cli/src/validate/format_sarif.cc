// SARIF 2.1.0 (GitHub code scanning, GitLab, IDEs): one result per finding
// with its rule id, level and the file/line of the document.
#include <map>

#include "model.h"
#include "text_escape.h"

namespace switchboard::cli::validate {
namespace {

nlohmann::json Location(const std::string& file, int line) {
  // artifactLocation.uri is a URI reference: a path with spaces or '#' as
  // it is would not parse (or would point elsewhere).
  nlohmann::json loc = {
      {"physicalLocation", {{"artifactLocation", {{"uri", PercentEncodePath(file)}}}}}};
  if (line > 0) loc["physicalLocation"]["region"] = {{"startLine", line}};
  return loc;
}

}  // namespace

void WriteSarif(const RunResult& r, std::string& out) {
  std::map<std::string, size_t> rule_index;
  nlohmann::json rules = nlohmann::json::array(), results = nlohmann::json::array();
  auto rule_of = [&](const std::string& id) {
    std::string rid = id.empty() ? "switchboard" : id;
    auto [it, inserted] = rule_index.emplace(rid, rule_index.size());
    if (inserted) {
      rules.push_back({{"id", rid}, {"shortDescription", {{"text", "Switchboard rule " + rid}}}});
    }
    return std::make_pair(rid, it->second);
  };
  for (const auto& p : r.problems) {
    auto [rid, idx] = rule_of(p.io ? "io" : "syntax");
    results.push_back({{"ruleId", rid},
                       {"ruleIndex", idx},
                       {"level", "error"},
                       {"message", {{"text", p.message}}},
                       {"locations", {Location(p.file, p.line)}}});
  }
  for (const auto& res : r.resources) {
    if (!res.checked) continue;
    auto add = [&](const rules::Finding& f, bool error) {
      auto [rid, idx] = rule_of(f.rule);
      results.push_back({{"ruleId", rid},
                         {"ruleIndex", idx},
                         {"level", error || r.strict ? "error" : "warning"},
                         {"message", {{"text", res.Display() + ": " + f.ToString()}}},
                         {"locations", {Location(res.file, res.line)}}});
    };
    for (const auto& f : res.report.errors) add(f, true);
    for (const auto& f : res.report.warnings) add(f, false);
  }
  nlohmann::json doc = {
      {"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
      {"version", "2.1.0"},
      {"runs",
       {{{"tool", {{"driver", {{"name", "switchboard"}, {"rules", std::move(rules)}}}}},
         {"results", std::move(results)}}}}};
  out += doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  out += "\n";
}

}  // namespace switchboard::cli::validate
