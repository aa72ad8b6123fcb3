#include "runner.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "inputs.h"
#include "switchboard/api/views.h"

namespace switchboard::cli::validate {
namespace {

using Key = std::tuple<std::string, std::string, std::string>;  // kind, ns, name

Key KeyOf(const Resource& r) { return {r.kind, r.ns, r.name}; }

// "no PubSubBackend or NatsServer found in 2 file(s) (a.yaml, b.yaml): 3
// document(s) of other kinds (ConfigMap, Deployment); ..."
FileProblem NothingFound(const Options& options, const std::vector<std::string>& files,
                         const RunResult& result) {
  auto list = [](const std::vector<std::string>& items) {
    std::string out;
    for (size_t i = 0; i < items.size() && i < 3; ++i) out += (i ? ", " : "") + items[i];
    if (items.size() > 3) out += ", ... (" + std::to_string(items.size()) + " in all)";
    return out;
  };
  std::vector<std::string> inputs;
  for (const auto& in : options.inputs) inputs.push_back(in == "-" ? "<stdin>" : in);
  std::string what;
  if (files.empty()) {
    what = "no *.yaml, *.yml or *.json file in " + list(inputs);
  } else {
    std::vector<std::string> names, kinds;
    for (const auto& f : files) names.push_back(f == "-" ? "<stdin>" : f);
    for (const auto& r : result.resources) {
      std::string k = r.kind.empty() ? "(no kind)" : r.kind;
      if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) kinds.push_back(k);
    }
    what = "read " + std::to_string(files.size()) + " file(s) (" + list(names) + "): ";
    what += result.resources.empty() ? "no documents (empty)"
                                     : std::to_string(result.resources.size()) +
                                           " document(s), of other kinds (" + list(kinds) + ")";
  }
  return {inputs.empty() ? "" : inputs.front(), 0,
          "no PubSubBackend or NatsServer found: " + what +
              "; check the paths, or pass --allow-empty if nothing to validate is expected",
          false};
}

}  // namespace

RunResult Check(const Options& options, std::istream& stdin_stream) {
  RunResult result;
  result.strict = options.strict;

  // Existing objects (--context): they feed cross-object rules, and a given
  // object with the same kind/namespace/name is judged as an UPDATE of it.
  RunResult context_run;
  if (!options.context.empty()) {
    auto files = ExpandPaths(options.context, &context_run.problems);
    LoadInputs(files, stdin_stream, options.default_namespace, &context_run);
    for (auto& p : context_run.problems) {
      p.message = "--context: " + p.message;
      result.problems.push_back(p);
    }
  }
  rules::Context context;
  std::map<Key, const nlohmann::json*> existing;
  for (auto& r : context_run.resources) {
    if (r.kind == "PubSubBackend")
      context.backends.push_back(std::move(r.object));
    else if (r.kind == "NatsServer")
      context.servers.push_back(std::move(r.object));
    else if (r.kind == "Secret")
      context.secrets.push_back(std::move(r.object));
  }
  for (const auto& b : context.backends)
    existing[{"PubSubBackend", api::NamespaceOf(b), api::NameOf(b)}] = &b;
  for (const auto& s : context.servers)
    existing[{"NatsServer", api::NamespaceOf(s), api::NameOf(s)}] = &s;

  // Each input object is judged as soon as it is read and then freed: only
  // the batch's small per-object facts (for the cross-object rules) and the
  // reports stay, so memory follows the largest document, not the input.
  rules::Batch batch(context, options.default_namespace);
  std::vector<size_t> positions;
  auto files = ExpandPaths(options.inputs, &result.problems);
  LoadInputs(files, stdin_stream, options.default_namespace, &result, [&](Resource& r) {
    if (r.checked && r.object.is_object()) {
      auto it = existing.find(KeyOf(r));
      batch.Add(r.object, it == existing.end() ? nullptr : it->second);
      positions.push_back(result.resources.size() - 1);
    } else if (!r.checked && r.kind == "Secret" && r.api_version == "v1") {
      // Secrets given as inputs let the rules check referenced keys and the
      // RabbitMQ URL scheme (values are never printed).
      batch.AddSecret(std::move(r.object));
    }
    r.object = nullptr;
  });
  if (!options.allow_empty && result.problems.empty() && result.Checked() == 0) {
    result.problems.push_back(NothingFound(options, files, result));
  }

  std::vector<rules::Report> reports = batch.Finish();
  std::map<Key, size_t> first_seen;
  for (size_t k = 0; k < positions.size(); ++k) {
    auto& r = result.resources[positions[k]];
    r.report = std::move(reports[k]);
    if (r.name.empty()) continue;
    auto [it, inserted] = first_seen.emplace(KeyOf(r), positions[k]);
    if (!inserted) {
      const auto& first = result.resources[it->second];
      r.report.warnings.push_back(
          {"metadata.name",
           "defined again (first at " + first.file.str() + ":" + std::to_string(first.line) +
               "); the later document replaces the earlier one on apply: keep one",
           "duplicate"});
    }
  }
  return result;
}

}  // namespace switchboard::cli::validate
