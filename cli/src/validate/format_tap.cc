// TAP version 13: one test point per resource; findings in the YAML
// diagnostic block; skipped kinds as "# SKIP".
#include "model.h"
#include "text_escape.h"

namespace switchboard::cli::validate {
namespace {

void Block(std::string& out, const char* key, const std::vector<rules::Finding>& fs) {
  if (fs.empty()) return;
  out += std::string("  ") + key + ":\n";
  for (const auto& f : fs) {
    // JSON strings are valid YAML flow scalars: safe quoting for any text.
    out += "    - " +
           nlohmann::json(f.ToString())
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
           "\n";
  }
}

std::string Safe(const std::string& text) {
  std::string s = EscapeText(text);
  for (auto& c : s) {
    if (c == '#') c = ' ';  // '#' starts a TAP directive
  }
  return s;
}

}  // namespace

void WriteTap(const RunResult& r, std::string& out) {
  out += "TAP version 13\n1.." + std::to_string(r.resources.size() + r.problems.size()) + "\n";
  size_t n = 0;
  for (const auto& p : r.problems) {
    out +=
        "not ok " + std::to_string(++n) + " - " + Safe(p.file) +
        (p.line ? ":" + std::to_string(p.line) : "") + "\n  ---\n  message: " +
        nlohmann::json(p.message).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
        "\n  ...\n";
  }
  for (const auto& res : r.resources) {
    std::string desc = Safe(res.file.str() + ":" + std::to_string(res.line) + " " + res.Display());
    if (!res.checked) {
      out += "ok " + std::to_string(++n) + " - " + desc + " # SKIP " + Safe(res.skip_reason) + "\n";
      continue;
    }
    bool failed = res.failed(r.strict);
    out += std::string(failed ? "not ok " : "ok ") + std::to_string(++n) + " - " + desc + "\n";
    if (!res.report.errors.empty() || !res.report.warnings.empty()) {
      out += "  ---\n";
      Block(out, "errors", res.report.errors);
      Block(out, "warnings", res.report.warnings);
      out += "  ...\n";
    }
  }
}

}  // namespace switchboard::cli::validate
