// Fuzzes what `switchboard validate` reads: arbitrary bytes -> YAML/JSON
// documents -> the rule set. Besides "no crash, no sanitizer report", it
// checks an invariant: the defaulting patch applied to an object gives
// exactly DefaultedCopy (what the mutating webhook relies on).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "switchboard/api/documents.h"
#include "switchboard/rules/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace switchboard;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  api::LoadOptions options;
  options.max_alias_nodes = 20'000;  // keep each input fast
  api::LoadResult loaded = api::LoadDocuments(text, options);

  std::vector<nlohmann::json> objects;
  for (const auto& doc : loaded.documents) {
    const nlohmann::json& o = doc.value;
    (void)rules::IsSwitchboardObject(o);
    rules::Report r = rules::Validate(o, rules::Context{});
    for (const auto& f : r.errors) (void)f.ToString();
    nlohmann::json defaulted = rules::DefaultedCopy(o);
    nlohmann::json patch = rules::DefaultingPatch(o);
    if (o.is_object()) {
      try {
        if (o.patch(patch) != defaulted) std::abort();  // patch and copy disagree
      } catch (const std::exception&) {
        std::abort();  // the patch does not apply to its own object
      }
    } else if (!patch.empty()) {
      std::abort();
    }
    objects.push_back(o);
  }
  // Cross-object rules over everything, with the first object as an UPDATE's old.
  std::vector<const nlohmann::json*> olds(objects.size(), nullptr);
  if (objects.size() > 1) olds[1] = &objects[0];
  (void)rules::ValidateAll(objects, rules::Context{}, "default", olds);
  return 0;
}
