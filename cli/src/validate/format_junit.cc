// JUnit XML: one testcase per resource (classname = file), failures for
// errors (and warnings with --strict), skipped kinds as <skipped/>; what CI
// systems (GitLab, Jenkins, GitHub test reporters) display natively.
#include "model.h"

namespace switchboard::cli::validate {
namespace {

std::string Xml(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // XML 1.0 forbids most control characters even escaped.
        if (c < 0x20 && c != '\n' && c != '\t' && c != '\r')
          out += "?";
        else
          out += static_cast<char>(c);
    }
  }
  return out;
}

std::string Lines(const std::vector<rules::Finding>& fs) {
  std::string out;
  for (const auto& f : fs) out += f.ToString() + "\n";
  return out;
}

}  // namespace

void WriteJunit(const RunResult& r, std::string& out) {
  size_t tests = r.resources.size() + r.problems.size();
  size_t failures = r.Invalid();
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"switchboard validate\" tests=\"" + std::to_string(tests) +
         "\" failures=\"" + std::to_string(failures) + "\" errors=\"" +
         std::to_string(r.problems.size()) + "\">\n";
  out += "  <testsuite name=\"switchboard validate\" tests=\"" + std::to_string(tests) +
         "\" failures=\"" + std::to_string(failures) + "\" errors=\"" +
         std::to_string(r.problems.size()) + "\" skipped=\"" + std::to_string(r.Skipped()) +
         "\">\n";
  for (const auto& p : r.problems) {
    out += "    <testcase classname=\"" + Xml(p.file) + "\" name=\"" + Xml(p.file) +
           (p.line ? ":" + std::to_string(p.line) : "") + "\">\n      <error message=\"" +
           Xml(p.message) + "\"/>\n    </testcase>\n";
  }
  for (const auto& res : r.resources) {
    out += "    <testcase classname=\"" + Xml(res.file.str()) + "\" name=\"" + Xml(res.Display()) +
           " (line " + std::to_string(res.line) + ")\"";
    if (!res.checked) {
      out += ">\n      <skipped message=\"" + Xml(res.skip_reason) + "\"/>\n    </testcase>\n";
      continue;
    }
    if (!res.failed(r.strict) && res.report.warnings.empty()) {
      out += "/>\n";
      continue;
    }
    out += ">\n";
    if (res.failed(r.strict)) {
      const auto& first =
          res.report.errors.empty() ? res.report.warnings.front() : res.report.errors.front();
      std::string body = Lines(res.report.errors) + (r.strict ? Lines(res.report.warnings) : "");
      out += "      <failure message=\"" + Xml(first.ToString()) + "\" type=\"" + Xml(first.rule) +
             "\">" + Xml(body) + "</failure>\n";
    }
    if (!res.report.warnings.empty()) {
      out += "      <system-out>" + Xml("warnings:\n" + Lines(res.report.warnings)) +
             "</system-out>\n";
    }
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
}

}  // namespace switchboard::cli::validate
