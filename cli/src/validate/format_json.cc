// JSON output: the whole result as one object, for scripts.
#include "model.h"

namespace switchboard::cli::validate {
namespace {

// A JSON string literal (nlohmann's escaping; invalid UTF-8 replaced).
// Names, paths and most messages are plain ASCII with nothing to escape:
// those are copied as they are, which is what the escaping would give.
void Str(std::string& out, const std::string& s) {
  bool plain = true;
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f || c == '"' || c == '\\') {
      plain = false;
      break;
    }
  }
  if (!plain) {
    out += nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return;
  }
  out += '"';
  out += s;
  out += '"';
}

// `"key": ` at the given indentation, after a comma when not the first.
void Key(std::string& out, const char* key, int indent, bool first) {
  out += first ? "\n" : ",\n";
  out.append(static_cast<size_t>(indent), ' ');
  out += '"';
  out += key;
  out += "\": ";
}

void Findings(std::string& out, const std::vector<rules::Finding>& fs) {
  if (fs.empty()) {
    out += "[]";
    return;
  }
  out += '[';
  for (size_t i = 0; i < fs.size(); ++i) {
    out += i ? ",\n        {" : "\n        {";
    Key(out, "field", 10, true);
    Str(out, fs[i].field);
    Key(out, "message", 10, false);
    Str(out, fs[i].message);
    Key(out, "rule", 10, false);
    Str(out, fs[i].rule);
    out += "\n        }";
  }
  out += "\n      ]";
}

// One resource at depth 2, keys in the order nlohmann's dump(2) of the
// same object would print them (sorted).
void ResourceItem(std::string& out, const Resource& res, bool strict) {
  out += '{';
  Key(out, "apiVersion", 6, true);
  Str(out, res.api_version);
  Key(out, "document", 6, false);
  out += std::to_string(res.document);
  if (res.checked) {
    Key(out, "errors", 6, false);
    Findings(out, res.report.errors);
  }
  Key(out, "file", 6, false);
  Str(out, res.file);
  if (res.item >= 0) {
    Key(out, "item", 6, false);
    out += std::to_string(res.item);
  }
  Key(out, "kind", 6, false);
  Str(out, res.kind);
  Key(out, "line", 6, false);
  out += std::to_string(res.line);
  Key(out, "name", 6, false);
  Str(out, res.name);
  Key(out, "namespace", 6, false);
  Str(out, res.ns);
  if (res.checked) {
    Key(out, "valid", 6, false);
    out += res.failed(strict) ? "false" : "true";
    Key(out, "warnings", 6, false);
    Findings(out, res.report.warnings);
  } else {
    Key(out, "reason", 6, false);
    Str(out, res.skip_reason);
  }
  out += "\n    }";
}

}  // namespace

// Written directly, exactly as nlohmann's dump(2) of the whole document
// would print it: building a tree of every result first cost an eighth of
// a 50,000-resource run, and resources are flushed as they are written.
void WriteJson(const RunResult& r, std::string& out,
               const std::function<void(std::string&)>& flush) {
  auto array = [&](auto&& each, size_t n) {
    if (n == 0) {
      out += "[]";
      return;
    }
    out += '[';
    for (size_t i = 0; i < n; ++i) {
      out += i ? ",\n    " : "\n    ";
      each(i);
      if (flush && out.size() > (1u << 20)) flush(out);
    }
    out += "\n  ]";
  };
  out += '{';
  Key(out, "fileErrors", 2, true);
  array(
      [&](size_t i) {
        const auto& p = r.problems[i];
        out += '{';
        Key(out, "file", 6, true);
        Str(out, p.file);
        Key(out, "io", 6, false);
        out += p.io ? "true" : "false";
        Key(out, "line", 6, false);
        out += std::to_string(p.line);
        Key(out, "message", 6, false);
        Str(out, p.message);
        out += "\n    }";
      },
      r.problems.size());
  std::vector<const Resource*> checked, skipped;
  for (const auto& res : r.resources) (res.checked ? checked : skipped).push_back(&res);
  Key(out, "resources", 2, false);
  array([&](size_t i) { ResourceItem(out, *checked[i], r.strict); }, checked.size());
  Key(out, "skipped", 2, false);
  array([&](size_t i) { ResourceItem(out, *skipped[i], r.strict); }, skipped.size());
  Key(out, "strict", 2, false);
  out += r.strict ? "true" : "false";
  Key(out, "summary", 2, false);
  out += '{';
  Key(out, "checked", 4, true);
  out += std::to_string(r.Checked());
  Key(out, "fileErrors", 4, false);
  out += std::to_string(r.problems.size());
  Key(out, "files", 4, false);
  out += std::to_string(r.files);
  Key(out, "invalid", 4, false);
  out += std::to_string(r.Invalid());
  Key(out, "skipped", 4, false);
  out += std::to_string(r.Skipped());
  Key(out, "withWarnings", 4, false);
  out += std::to_string(r.WithWarnings());
  out += "\n  }";
  Key(out, "valid", 2, false);
  out += r.Valid() ? "true" : "false";
  out += "\n}\n";
}

}  // namespace switchboard::cli::validate
