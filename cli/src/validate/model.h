// `switchboard validate`: what one run found, shared by the loader, the rule
// runner and the output formats.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "switchboard/rules/validate.h"

namespace switchboard::cli::validate {

enum class Format { kText, kJson, kJunit, kTap, kSarif };

struct Options {
  std::vector<std::string> inputs;   // files, directories, "-" for stdin
  std::vector<std::string> context;  // --context: objects that already exist
  Format format = Format::kText;
  bool strict = false;   // warnings fail the run
  bool verbose = false;  // also list valid and skipped documents
  // No Switchboard object among the inputs is an error unless this is set:
  // a mistyped path must not pass a pipeline.
  bool allow_empty = false;
  std::string default_namespace = "default";
};

// An immutable string that many resources share (their file name, their
// apiVersion): one copy for all the documents that have it, where a string
// each costs ~100 bytes a resource on a large input.
class SharedString {
 public:
  SharedString() = default;
  SharedString(std::string s)  // NOLINT: implicit, as std::string is
      : s_(std::make_shared<const std::string>(std::move(s))) {}
  const std::string& str() const { return s_ ? *s_ : Empty(); }
  operator const std::string&() const { return str(); }  // NOLINT
  bool operator==(std::string_view other) const { return str() == other; }

 private:
  static const std::string& Empty() {
    static const std::string empty;
    return empty;
  }
  std::shared_ptr<const std::string> s_;
};

// One document (or List item) of the input.
struct Resource {
  SharedString file;  // as the user named it; "<stdin>" for "-"
  int line = 0;
  int document = 0;  // 0-based document index in the file
  int item = -1;     // List item index or -1
  SharedString api_version;
  std::string kind, ns, name;
  bool checked = false;     // a Switchboard object, judged by the rules
  std::string skip_reason;  // when not checked
  nlohmann::json object;    // moved out (null) once judged
  rules::Report report;

  std::string Display() const;  // "PubSubBackend team-a/hatchet"
  bool failed(bool strict) const {
    return !report.errors.empty() || (strict && !report.warnings.empty());
  }
};

// A file that could not be read (I/O) or parsed (syntax).
struct FileProblem {
  std::string file;
  int line = 0;  // 0 when not about a line
  std::string message;
  bool io = false;  // I/O (exit 2) rather than invalid content (exit 1)
};

struct RunResult {
  std::vector<Resource> resources;
  std::vector<FileProblem> problems;
  size_t files = 0;
  bool strict = false;

  size_t Checked() const;
  size_t Invalid() const;  // checked resources that fail (strict-aware)
  size_t WithWarnings() const;
  size_t Skipped() const;
  bool IoError() const;
  bool Valid() const;    // nothing invalid, no syntax error, no I/O error
  int ExitCode() const;  // 0 valid, 1 invalid, 2 I/O
};

// Writes the result in the chosen format to `out`.
void WriteText(const RunResult& r, bool verbose, std::string& out);
// `flush`, when given, is called with `out` whenever it holds more than
// 1 MiB, to write it out and clear it: a report of many resources need not
// be held in memory whole.
void WriteJson(const RunResult& r, std::string& out,
               const std::function<void(std::string&)>& flush = {});
void WriteJunit(const RunResult& r, std::string& out);
void WriteTap(const RunResult& r, std::string& out);
void WriteSarif(const RunResult& r, std::string& out);

}  // namespace switchboard::cli::validate
