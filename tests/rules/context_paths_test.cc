// One rule set, one context: every object of every scene of the corpus
// (testdata/context, crds/samples, tests/e2e/testdata/invalid) is judged
// against the others by the webhook (Review), by `switchboard validate
// --context` (the real binary) and by the operator's rules step (over the
// objects as its caches keep them), and all three must say the same.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cache_shapes.h"
#include "rules_context.h"
#include "switchboard/api/documents.h"
#include "switchboard/api/metadata.h"
#include "switchboard/rules/context_cache.h"
#include "switchboard/testing/process.h"
#include "switchboard/testing/temp_dir.h"
#include "switchboard/webhook_admission/admission.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
namespace sb = switchboard;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

struct Verdict {
  bool ok = true;
  std::vector<std::string> errors, warnings;
  bool operator==(const Verdict&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Verdict& v) {
  os << (v.ok ? "allowed" : "refused");
  for (const auto& e : v.errors) os << "\n  error: " << e;
  for (const auto& w : v.warnings) os << "\n  warning: " << w;
  return os;
}

Verdict FromReport(const sb::rules::Report& r) {
  Verdict v;
  v.ok = r.ok();
  for (const auto& f : r.errors) v.errors.push_back(f.ToString());
  for (const auto& f : r.warnings) v.warnings.push_back(f.ToString());
  return v;
}

struct Scene {
  std::string name;
  std::vector<json> objects;  // PubSubBackends and NatsServers, namespaced
};

bool Judged(const json& o) {
  std::string kind = sb::api::KindOf(o);
  return kind == "PubSubBackend" || kind == "NatsServer";
}

// A file's objects as the API server would store them: in a namespace.
Scene LoadScene(const fs::path& file) {
  Scene s{file.filename().string(), {}};
  auto text = sb::api::ReadFileText(file.string());
  EXPECT_TRUE(text.ok()) << file;
  if (!text.ok()) return s;
  auto loaded = sb::api::LoadDocuments(*text);
  EXPECT_TRUE(loaded.status.ok()) << file << ": " << loaded.status.ToString();
  for (auto& d : loaded.documents) {
    if (!d.value.is_object() || !Judged(d.value)) continue;
    if (d.value.contains("metadata") && d.value["metadata"].is_object() &&
        !d.value["metadata"].contains("namespace")) {
      d.value["metadata"]["namespace"] = "default";
    }
    s.objects.push_back(std::move(d.value));
  }
  return s;
}

std::vector<Scene> Corpus() {
  const std::string src = Env("SWITCHBOARD_SOURCE_DIR");
  std::vector<Scene> out;
  for (const char* dir :
       {"tests/rules/testdata/context", "crds/samples", "tests/e2e/testdata/invalid"}) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(fs::path(src) / dir)) {
      if (e.path().extension() == ".yaml") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) out.push_back(LoadScene(f));
  }
  return out;
}

sb::rules::Context ContextOf(const Scene& scene) {
  sb::rules::Context c;
  for (const auto& o : scene.objects) {
    (sb::api::KindOf(o) == "PubSubBackend" ? c.backends : c.servers).push_back(o);
  }
  return c;
}

Verdict ByWebhook(const json& object, const sb::webhook_admission::ContextSource& source) {
  json review = {{"apiVersion", "admission.k8s.io/v1"},
                 {"kind", "AdmissionReview"},
                 {"request",
                  {{"uid", "u1"},
                   {"kind",
                    {{"group", "pubsub.switchboard.dev"},
                     {"version", "v1alpha1"},
                     {"kind", sb::api::KindOf(object)}}},
                   {"operation", "CREATE"},
                   {"namespace", sb::api::NamespaceOf(object)},
                   {"name", sb::api::NameOf(object)},
                   {"object", object}}}};
  auto out = sb::webhook_admission::Review(review.dump(),
                                           sb::webhook_admission::Webhook::kValidating, source);
  json body = json::parse(out.body);
  const json& response = body["response"];
  Verdict v;
  v.ok = response.value("allowed", false);
  if (!v.ok) {
    for (const auto& c : response["status"]["details"]["causes"]) {
      std::string field = c.value("field", "");
      std::string message = c.value("message", "");
      v.errors.push_back(field.empty() ? message : field + ": " + message);
    }
  }
  for (const auto& w : response.value("warnings", json::array())) {
    v.warnings.push_back(w.get<std::string>());
  }
  return v;
}

Verdict ByCli(const json& object, const Scene& scene, const sb::testing::TempDir& dir) {
  std::string others, self = object.dump() + "\n";
  for (const auto& o : scene.objects) {
    if (&o != &object) others += o.dump() + "\n";
  }
  std::vector<std::string> argv = {Env("SWITCHBOARD_BINARY_DIR") + "/bin/switchboard", "validate",
                                   "-o", "json"};
  if (!others.empty()) {
    argv.push_back("--context");
    argv.push_back(dir.WriteFile("context.json", others));
  }
  argv.push_back(dir.WriteFile("object.json", self));
  auto r = sb::testing::Run(argv);
  Verdict v;
  json doc = json::parse(r.out, nullptr, false);
  EXPECT_TRUE(doc.is_object() && doc["resources"].size() == 1) << r.out << r.err;
  if (!doc.is_object() || doc["resources"].size() != 1) return v;
  const json& res = doc["resources"][0];
  for (const auto& f : res.value("errors", json::array())) {
    std::string field = f.value("field", "");
    std::string message = f.value("message", "");
    v.errors.push_back(field.empty() ? message : field + ": " + message);
  }
  for (const auto& f : res.value("warnings", json::array())) {
    std::string field = f.value("field", "");
    std::string message = f.value("message", "");
    v.warnings.push_back(field.empty() ? message : field + ": " + message);
  }
  v.ok = v.errors.empty();
  EXPECT_EQ(r.exit_code, v.ok ? 0 : 1) << r.out << r.err;
  return v;
}

// The objects as the operator's informers keep them (cache_shapes.h).
std::vector<sb::rules::ObjectPtr> Cached(const Scene& scene) {
  std::vector<sb::rules::ObjectPtr> out;
  for (json o : scene.objects) {
    sb::operator_controller::CompactCustomObject(o);
    out.push_back(std::make_shared<const json>(std::move(o)));
  }
  return out;
}

TEST(ContextPaths, WebhookCliAndOperatorAgreeOnEveryObjectOfTheCorpus) {
  std::vector<Scene> corpus = Corpus();
  ASSERT_GE(corpus.size(), 10u);
  sb::testing::TempDir dir;
  size_t judged = 0, refused = 0;
  std::set<std::string> cross_rules;  // cross-object rules the corpus made fire
  for (const auto& scene : corpus) {
    sb::webhook_admission::StaticContextSource source(ContextOf(scene));
    std::vector<sb::rules::ObjectPtr> cached = Cached(scene);
    auto operator_context =
        sb::operator_controller::NewRulesContextOver([cached] { return cached; });
    auto snapshot = operator_context->Snapshot();
    for (size_t i = 0; i < scene.objects.size(); ++i) {
      const json& object = scene.objects[i];
      SCOPED_TRACE(scene.name + ": " + sb::api::KindOf(object) + " " +
                   sb::api::NamespaceOf(object) + "/" + sb::api::NameOf(object));
      sb::rules::Report report = sb::operator_controller::ValidateCached(*cached[i], *snapshot);
      Verdict by_operator = FromReport(report);
      Verdict by_webhook = ByWebhook(object, source);
      Verdict by_cli = ByCli(object, scene, dir);
      EXPECT_EQ(by_webhook, by_operator);
      EXPECT_EQ(by_cli, by_operator);
      ++judged;
      refused += by_operator.ok ? 0 : 1;
      for (const auto* list : {&report.errors, &report.warnings}) {
        for (const auto& f : *list) {
          if (f.rule == "unique-prefix" || f.rule == "unique-username" ||
              f.rule == "secret-collision" || f.rule == "namespace-not-allowed") {
            cross_rules.insert(f.rule);
          }
        }
      }
    }
  }
  EXPECT_GE(judged, 40u);
  EXPECT_GE(refused, 20u);
  // The corpus exercises every cross-object rule, so the agreement above
  // says something about the context, not only about each object alone.
  EXPECT_EQ(cross_rules, (std::set<std::string>{"unique-prefix", "unique-username",
                                                "secret-collision", "namespace-not-allowed"}));
}

}  // namespace
