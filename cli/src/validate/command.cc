// `switchboard validate FILE|DIR|- ...`: the rule set of the admission
// webhook, offline, for GitOps pipelines. Exit 0 valid, 1 invalid, 2 usage or
// I/O error.
#include <malloc.h>

#include <cstdio>
#include <iostream>

#include "commands.h"
#include "model.h"
#include "runner.h"

namespace switchboard::cli {
namespace {

constexpr const char* kUsage = R"(Usage: switchboard validate [flags] FILE|DIR|- ...

Checks PubSubBackend and NatsServer manifests with the same rules as the
admission webhook, offline. Reads multi-document YAML and JSON (also kind:
List), directories recursively (*.yaml, *.yml, *.json), and stdin for "-".
Cross-object rules (one prefix or username per server, allowed namespaces,
Secret name clashes) see every document given. Other kinds are skipped.

Flags:
  -o, --output FORMAT   text (default), json, junit, tap or sarif
      --strict          fail on warnings too
      --allow-empty     succeed when no PubSubBackend or NatsServer is found
                        (by default that fails: a mistyped path must not pass)
  -v, --verbose         also list valid and skipped documents (text)
  -n, --namespace NS    namespace of documents without one (default "default")
      --context PATH    objects that already exist in the cluster (files or
                        directories, e.g. from `kubectl get psb,natssrv -A -o yaml`);
                        repeatable; a given object with the same name is judged
                        as an update of it
  -h, --help            this help

Exit codes: 0 valid, 1 invalid (or warnings with --strict, unparsable
YAML/JSON, or nothing to validate without --allow-empty), 2 usage or I/O error.

Example (CI): switchboard validate --strict -o junit deploy/ > validate.xml
)";

// Set once, at the end of RunValidate (see there).
validate::RunResult* kept_result = nullptr;

int UsageError(const std::string& msg) {
  std::fprintf(stderr, "switchboard validate: %s\nRun 'switchboard validate --help' for usage.\n",
               msg.c_str());
  return 2;
}

}  // namespace

int RunValidate(const std::vector<std::string>& args) {
  using validate::Format;
  // Parsed manifests are millions of small allocations freed together;
  // glibc's fast bins make each large free walk all of them
  // (malloc_consolidate): without them a large run takes ~13% less CPU.
  mallopt(M_MXFAST, 0);
  validate::Options options;
  bool flags_done = false;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const std::string& flag, std::string* out) -> bool {
      // --flag=value, -fvalue, or --flag value
      if (a.size() > flag.size() && a.compare(0, flag.size(), flag) == 0) {
        *out = a.substr(flag.size() + (a[flag.size()] == '=' ? 1 : 0));
        return true;
      }
      if (a == flag) {
        if (i + 1 >= args.size()) return false;
        *out = args[++i];
        return true;
      }
      return false;
    };
    auto is = [&](const char* flag) {
      return a == flag || a.rfind(std::string(flag) + "=", 0) == 0 ||
             (flag[1] != '-' && a.rfind(flag, 0) == 0 && a.size() > 2);
    };
    if (flags_done || a == "-" || a.empty() || a[0] != '-') {
      options.inputs.push_back(a);
    } else if (a == "--") {
      flags_done = true;
    } else if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--strict") {
      options.strict = true;
    } else if (a == "--allow-empty") {
      options.allow_empty = true;
    } else if (a == "-v" || a == "--verbose") {
      options.verbose = true;
    } else if (is("-o") || is("--output")) {
      std::string f;
      if (!value(a.rfind("--", 0) == 0 ? "--output" : "-o", &f))
        return UsageError(a + " needs a value");
      if (f == "text")
        options.format = Format::kText;
      else if (f == "json")
        options.format = Format::kJson;
      else if (f == "junit")
        options.format = Format::kJunit;
      else if (f == "tap")
        options.format = Format::kTap;
      else if (f == "sarif")
        options.format = Format::kSarif;
      else
        return UsageError("unknown output format '" + f + "'; use text, json, junit, tap or sarif");
    } else if (is("-n") || is("--namespace")) {
      std::string ns;
      if (!value(a.rfind("--", 0) == 0 ? "--namespace" : "-n", &ns) || ns.empty()) {
        return UsageError(a + " needs a namespace");
      }
      options.default_namespace = ns;
    } else if (is("--context")) {
      std::string path;
      if (!value("--context", &path) || path.empty()) return UsageError("--context needs a path");
      options.context.push_back(path);
    } else {
      return UsageError("unknown flag '" + a + "'");
    }
  }
  if (options.inputs.empty()) return UsageError("no input; give files, directories or - for stdin");
  size_t stdin_uses = 0;
  for (const auto& in : options.inputs) stdin_uses += in == "-";
  for (const auto& in : options.context) stdin_uses += in == "-";
  if (stdin_uses > 1) return UsageError("'-' (stdin) can be given only once");

  validate::RunResult result = validate::Check(options, std::cin);
  std::string out;
  switch (options.format) {
    case Format::kText:
      validate::WriteText(result, options.verbose, out);
      break;
    case Format::kJson:
      validate::WriteJson(result, out, [](std::string& part) {
        std::fwrite(part.data(), 1, part.size(), stdout);
        part.clear();
      });
      break;
    case Format::kJunit:
      validate::WriteJunit(result, out);
      break;
    case Format::kTap:
      validate::WriteTap(result, out);
      break;
    case Format::kSarif:
      validate::WriteSarif(result, out);
      break;
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  int code = result.ExitCode();
  // The process ends now: the kernel takes the parsed documents back at
  // once, while freeing them one allocation at a time would cost a fifth of
  // a large run. Kept reachable on purpose (no leak report).
  kept_result = new validate::RunResult(std::move(result));
  return code;
}

}  // namespace switchboard::cli
