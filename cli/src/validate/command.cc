// `switchboard validate FILE|DIR|- ...`: the rule set of the admission
// webhook, offline, for GitOps pipelines. Exit 0 valid, 1 invalid, 2 usage or
// I/O error.
#include <malloc.h>

#include <cstdio>
#include <iostream>

#include "commands.h"
#include "model.h"
#include "runner.h"
#include "switchboard/common/flags.h"

namespace switchboard::cli {
namespace {

constexpr const char* kUsage = R"(Usage: switchboard validate [flags] FILE|DIR|- ...

Checks PubSubBackend and NatsServer manifests with the same rules as the
admission webhook, offline. Reads multi-document YAML and JSON (also kind:
List), directories recursively (*.yaml, *.yml, *.json), and stdin for "-".
Cross-object rules (one prefix or username per server, allowed namespaces,
Secret name clashes) see every document given. Other kinds are skipped.)";

constexpr const char* kExitCodes = R"(
Exit codes: 0 valid, 1 invalid (or warnings with --strict, unparsable
YAML/JSON, or nothing to validate without --allow-empty), 2 usage or I/O error.

Example (CI): switchboard validate --strict -o junit deploy/ > validate.xml
)";

// Every flag, bound to `options`.
void Register(flags::FlagSet* set, validate::Options* options) {
  using validate::Format;
  set->Value("output", "FORMAT", "text (default), json, junit, tap or sarif",
             [options](std::string_view f) -> Status {
               if (f == "text")
                 options->format = Format::kText;
               else if (f == "json")
                 options->format = Format::kJson;
               else if (f == "junit")
                 options->format = Format::kJunit;
               else if (f == "tap")
                 options->format = Format::kTap;
               else if (f == "sarif")
                 options->format = Format::kSarif;
               else
                 return Status::InvalidArgument("unknown output format '" + std::string(f) +
                                                "'; use text, json, junit, tap or sarif");
               return Status::Ok();
             })
      .Short('o');
  set->Bool("strict", &options->strict, "fail on warnings too");
  set->Bool("allow-empty", &options->allow_empty,
            "succeed when no PubSubBackend or NatsServer is found\n"
            "(by default that fails: a mistyped path must not pass)");
  set->Bool("verbose", &options->verbose, "also list valid and skipped documents (text)")
      .Short('v');
  set->Value("namespace", "NS", "namespace of documents without one (default \"default\")",
             [options](std::string_view ns) -> Status {
               if (ns.empty()) return Status::InvalidArgument("needs a namespace");
               options->default_namespace = std::string(ns);
               return Status::Ok();
             })
      .Short('n');
  set->Value("context", "PATH",
             "objects that already exist in the cluster (files or\n"
             "directories, e.g. from `kubectl get psb,natssrv -A -o yaml`);\n"
             "repeatable; a given object with the same name is judged\n"
             "as an update of it",
             [options](std::string_view path) -> Status {
               if (path.empty()) return Status::InvalidArgument("needs a path");
               options->context.emplace_back(path);
               return Status::Ok();
             });
}

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
  flags::FlagSet set(kUsage);
  Register(&set, &options);
  set.Positional(&options.inputs);
  if (Status s = set.Parse(args, 1); !s.ok()) return UsageError(s.message());
  if (set.help()) {
    std::fputs((set.Help() + kExitCodes).c_str(), stdout);
    return 0;
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
