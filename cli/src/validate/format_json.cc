// JSON output: the whole result as one object, for scripts.
#include "model.h"

namespace switchboard::cli::validate {
namespace {

nlohmann::json Findings(const std::vector<validation::Finding>& fs) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& f : fs)
    a.push_back({{"field", f.field}, {"message", f.message}, {"rule", f.rule}});
  return a;
}

}  // namespace

void WriteJson(const RunResult& r, std::string& out) {
  nlohmann::json resources = nlohmann::json::array(), skipped = nlohmann::json::array(),
                 problems = nlohmann::json::array();
  for (const auto& res : r.resources) {
    nlohmann::json item = {{"file", res.file},         {"line", res.line},
                           {"document", res.document}, {"apiVersion", res.api_version},
                           {"kind", res.kind},         {"namespace", res.ns},
                           {"name", res.name}};
    if (res.item >= 0) item["item"] = res.item;
    if (!res.checked) {
      item["reason"] = res.skip_reason;
      skipped.push_back(std::move(item));
      continue;
    }
    item["valid"] = !res.failed(r.strict);
    item["errors"] = Findings(res.report.errors);
    item["warnings"] = Findings(res.report.warnings);
    resources.push_back(std::move(item));
  }
  for (const auto& p : r.problems) {
    problems.push_back({{"file", p.file}, {"line", p.line}, {"message", p.message}, {"io", p.io}});
  }
  nlohmann::json doc = {
      {"valid", r.Valid()},
      {"strict", r.strict},
      {"summary",
       {{"files", r.files},
        {"checked", r.Checked()},
        {"invalid", r.Invalid()},
        {"withWarnings", r.WithWarnings()},
        {"skipped", r.Skipped()},
        {"fileErrors", r.problems.size()}}},
      {"resources", std::move(resources)},
      {"skipped", std::move(skipped)},
      {"fileErrors", std::move(problems)},
  };
  out += doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  out += "\n";
}

}  // namespace switchboard::cli::validate
