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

// The document is written piece by piece, one resource at a time, exactly
// as nlohmann's dump(2) of the whole would print it: building one tree of
// every result first cost an eighth of a 50,000-resource run.
void WriteJson(const RunResult& r, std::string& out,
               const std::function<void(std::string&)>& flush) {
  auto dump = [](const nlohmann::json& v, int indent) {
    std::string text = v.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    std::string pad(static_cast<size_t>(indent), ' ');
    std::string shifted;
    shifted.reserve(text.size() + text.size() / 8);
    for (char c : text) {
      shifted += c;
      if (c == '\n') shifted += pad;
    }
    return shifted;
  };
  // An array of objects at depth 1: "[]" or "[\n    {...},\n    {...}\n  ]".
  struct Array {
    std::string text;
    void Add(const std::string& item) {
      text += text.empty() ? "[\n    " : ",\n    ";
      text += item;
    }
    std::string Close() const { return text.empty() ? "[]" : text + "\n  ]"; }
  } skipped, problems;
  // Resources are the bulk: written straight to `out` (and flushed).
  for (const auto& p : r.problems) {
    problems.Add(
        dump({{"file", p.file}, {"line", p.line}, {"message", p.message}, {"io", p.io}}, 4));
  }
  out += "{\n  \"fileErrors\": " + problems.Close();
  out += ",\n  \"resources\": ";
  bool any_resource = false;
  for (const auto& res : r.resources) {
    nlohmann::json item = {{"file", res.file},         {"line", res.line},
                           {"document", res.document}, {"apiVersion", res.api_version},
                           {"kind", res.kind},         {"namespace", res.ns},
                           {"name", res.name}};
    if (res.item >= 0) item["item"] = res.item;
    if (!res.checked) {
      item["reason"] = res.skip_reason;
      skipped.Add(dump(item, 4));
      continue;
    }
    item["valid"] = !res.failed(r.strict);
    item["errors"] = Findings(res.report.errors);
    item["warnings"] = Findings(res.report.warnings);
    out += any_resource ? ",\n    " : "[\n    ";
    any_resource = true;
    out += dump(item, 4);
    if (flush && out.size() > (1u << 20)) flush(out);
  }
  out += any_resource ? "\n  ]" : "[]";
  nlohmann::json summary = {{"files", r.files},       {"checked", r.Checked()},
                            {"invalid", r.Invalid()}, {"withWarnings", r.WithWarnings()},
                            {"skipped", r.Skipped()}, {"fileErrors", r.problems.size()}};
  // Keys in nlohmann's (sorted) order.
  out += ",\n  \"skipped\": " + skipped.Close();
  out += std::string(",\n  \"strict\": ") + (r.strict ? "true" : "false");
  out += ",\n  \"summary\": " + dump(summary, 2);
  out += std::string(",\n  \"valid\": ") + (r.Valid() ? "true" : "false");
  out += "\n}\n";
}

}  // namespace switchboard::cli::validate
