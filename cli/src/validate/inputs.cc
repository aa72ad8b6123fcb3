#include "inputs.h"

#include <algorithm>
#include <filesystem>

#include "switchboard/api/documents.h"
#include "switchboard/api/json_fields.h"
#include "switchboard/api/views.h"

namespace switchboard::cli::validate {
namespace fs = std::filesystem;

namespace {

bool IsManifest(const fs::path& p) {
  auto ext = p.extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

// Sets a resource's identity fields from its object and whether the rules
// judge it.
void Identify(Resource& r, const std::string& default_namespace, SharedString* last_api_version) {
  if (!r.object.is_object()) {
    r.checked = true;  // judged: a non-object is invalid input
    r.report.errors.push_back(
        {"", "document is not a Kubernetes object (a mapping with apiVersion and kind)", "type"});
    return;
  }
  std::string_view api_version = api::String(api::Field(r.object, "apiVersion")).value_or("");
  // Consecutive documents nearly always share their apiVersion: share it.
  if (!(*last_api_version == api_version)) *last_api_version = std::string(api_version);
  r.api_version = *last_api_version;
  r.kind = api::KindOf(r.object);
  r.name = api::NameOf(r.object);
  // As `kubectl apply -n`: an object without a namespace lands in the default one.
  r.ns = api::NamespaceOf(r.object);
  if (r.ns.empty() && r.object.contains("metadata") && r.object["metadata"].is_object()) {
    r.ns = default_namespace;
    r.object["metadata"]["namespace"] = default_namespace;
  }
  r.checked = rules::IsSwitchboardObject(r.object);
  if (!r.checked) {
    r.skip_reason = r.kind.empty() ? "no kind: not a Kubernetes object" : "not a Switchboard kind";
    // Only v1 Secrets are read again (referenced keys); the rest of a
    // skipped document is not needed.
    if (r.kind != "Secret" || r.api_version != "v1") r.object = nullptr;
  }
}

}  // namespace

std::vector<std::string> ExpandPaths(const std::vector<std::string>& paths,
                                     std::vector<FileProblem>* problems) {
  std::vector<std::string> files;
  for (const auto& p : paths) {
    if (p == "-") {
      files.push_back(p);
      continue;
    }
    std::error_code ec;
    auto status = fs::status(p, ec);
    if (ec || !fs::exists(status)) {
      problems->push_back({p, 0, "no such file or directory", true});
      continue;
    }
    if (!fs::is_directory(status)) {
      files.push_back(p);  // a named file is read whatever its extension
      continue;
    }
    std::vector<std::string> found;
    fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      if (it->is_regular_file(ec) && IsManifest(it->path())) found.push_back(it->path().string());
    }
    if (ec) problems->push_back({p, 0, "cannot read directory: " + ec.message(), true});
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

void LoadInputs(const std::vector<std::string>& files, std::istream& stdin_stream,
                const std::string& default_namespace, RunResult* result,
                const std::function<void(Resource&)>& on_resource) {
  SharedString last_api_version;
  for (const auto& path : files) {
    SharedString display(path == "-" ? "<stdin>" : path);
    auto text = path == "-" ? api::ReadStreamText(stdin_stream) : api::ReadFileText(path);
    ++result->files;
    if (!text.ok()) {
      result->problems.push_back({display, 0, text.status().message(), true});
      continue;
    }
    api::LoadOptions load;
    // No rule reads them, and on large manifests they are most of the text
    // (and six times as much once parsed).
    load.drop_metadata_fields = {"labels", "annotations", "managedFields", "ownerReferences"};
    api::LoadResult loaded = api::LoadDocuments(*text, load, [&](api::Document&& doc) {
      Resource& r = result->resources.emplace_back();
      r.file = display;
      r.line = doc.line;
      r.document = doc.index;
      r.item = doc.item;
      r.object = std::move(doc.value);
      Identify(r, default_namespace, &last_api_version);
      if (on_resource) on_resource(r);
    });
    *text = std::string();  // the documents are parsed: give the text's memory back
    if (!loaded.status.ok()) {
      result->problems.push_back({display, loaded.error_line, loaded.status.message(), false});
    }
  }
}

}  // namespace switchboard::cli::validate
