#include "runner.h"

#include <map>
#include <tuple>

#include "inputs.h"
#include "switchboard/api/views.h"

namespace switchboard::cli::validate {
namespace {

using Key = std::tuple<std::string, std::string, std::string>;  // kind, ns, name

Key KeyOf(const Resource& r) { return {r.kind, r.ns, r.name}; }

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
  auto files = ExpandPaths(options.inputs, &result.problems);
  LoadInputs(files, stdin_stream, options.default_namespace, &result);

  validation::Context context;
  std::map<Key, const nlohmann::json*> existing;
  for (const auto& r : context_run.resources) {
    if (r.kind == "PubSubBackend")
      context.backends.push_back(r.object);
    else if (r.kind == "NatsServer")
      context.servers.push_back(r.object);
    else if (r.kind == "Secret")
      context.secrets.push_back(r.object);
  }
  for (const auto& b : context.backends)
    existing[{"PubSubBackend", api::NamespaceOf(b), api::NameOf(b)}] = &b;
  for (const auto& s : context.servers)
    existing[{"NatsServer", api::NamespaceOf(s), api::NameOf(s)}] = &s;
  // Secrets given as inputs let the rules check referenced keys and the
  // RabbitMQ URL scheme (values are never printed).
  for (const auto& r : result.resources) {
    if (r.kind == "Secret" && r.api_version == "v1") context.secrets.push_back(r.object);
  }

  std::vector<nlohmann::json> objects;
  std::vector<const nlohmann::json*> olds;
  std::vector<size_t> positions;
  std::map<Key, size_t> first_seen;
  objects.reserve(result.resources.size());
  for (size_t i = 0; i < result.resources.size(); ++i) {
    auto& r = result.resources[i];
    if (!r.checked || !r.object.is_object()) continue;
    // The outputs need only the identity fields: hand the object over.
    objects.push_back(std::move(r.object));
    auto it = existing.find(KeyOf(r));
    olds.push_back(it == existing.end() ? nullptr : it->second);
    positions.push_back(i);
  }
  std::vector<validation::Report> reports =
      validation::ValidateAll(objects, context, options.default_namespace, olds);
  for (size_t k = 0; k < positions.size(); ++k) {
    auto& r = result.resources[positions[k]];
    r.report = std::move(reports[k]);
    if (r.name.empty()) continue;
    auto [it, inserted] = first_seen.emplace(KeyOf(r), positions[k]);
    if (!inserted) {
      const auto& first = result.resources[it->second];
      r.report.warnings.push_back(
          {"metadata.name",
           "defined again (first at " + first.file + ":" + std::to_string(first.line) +
               "); the later document replaces the earlier one on apply: keep one",
           "duplicate"});
    }
  }
  return result;
}

}  // namespace switchboard::cli::validate
