#include "rules_context.h"

#include "switchboard/api/metadata.h"
#include "switchboard/operator_logic/packed.h"

namespace switchboard::operator_controller {

std::unique_ptr<rules::ContextCache> NewRulesContext(const kube::MultiStore* backends,
                                                     const kube::MultiStore* servers) {
  return NewRulesContextOver([backends, servers] {
    std::vector<kube::ObjectPtr> all = servers->List();
    for (auto& o : backends->List()) all.push_back(std::move(o));
    return all;
  });
}

std::unique_ptr<rules::ContextCache> NewRulesContextOver(rules::ContextCache::List list) {
  return std::make_unique<rules::ContextCache>(std::move(list), [](const nlohmann::json& cached) {
    return operator_logic::ApiShaped(cached);
  });
}

rules::Report ValidateCached(const nlohmann::json& cached, const rules::ContextSnapshot& context) {
  return rules::Validate(operator_logic::ApiShaped(cached), context.index(),
                         rules::Operation::kCreate, nullptr, api::NamespaceOf(cached));
}

}  // namespace switchboard::operator_controller
