// Text output: one compiler-style line per finding ("file:line: error: ..."),
// which editors and CI log viewers turn into links, then a summary. Names,
// paths and messages come from the input: EscapeText keeps each finding on
// its own visible line.
#include "model.h"
#include "text_escape.h"

namespace switchboard::cli::validate {
namespace {

void Line(std::string& out, const Resource& r, const char* level, const std::string& text) {
  out += EscapeText(r.file.str()) + ":" + std::to_string(r.line) + ": " + level + ": " +
         EscapeText(r.Display()) + ": " + EscapeText(text) + "\n";
}

}  // namespace

void WriteText(const RunResult& result, bool verbose, std::string& out) {
  for (const auto& p : result.problems) {
    out += EscapeText(p.file) + (p.line > 0 ? ":" + std::to_string(p.line) : "") +
           ": error: " + EscapeText(p.message) + "\n";
  }
  for (const auto& r : result.resources) {
    if (!r.checked) {
      if (verbose) Line(out, r, "skipped", r.skip_reason);
      continue;
    }
    for (const auto& f : r.report.errors) Line(out, r, "error", f.ToString());
    for (const auto& f : r.report.warnings) {
      Line(out, r, result.strict ? "error (strict)" : "warning", f.ToString());
    }
    if (verbose && r.report.errors.empty() && r.report.warnings.empty())
      Line(out, r, "ok", "valid");
  }
  out += std::to_string(result.Checked()) + " resource(s) checked in " +
         std::to_string(result.files) + " file(s): " + std::to_string(result.Invalid()) +
         " invalid, " + std::to_string(result.WithWarnings()) + " with warnings, " +
         std::to_string(result.Skipped()) + " skipped";
  if (!result.problems.empty()) {
    out += ", " + std::to_string(result.problems.size()) + " file error(s)";
  }
  out += result.Valid() ? " -- valid\n" : " -- INVALID\n";
}

}  // namespace switchboard::cli::validate
