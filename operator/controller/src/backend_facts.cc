// What the shared rules compare a PubSubBackend with (rules::Context):
// only the backends on the same server that could clash, and the server.
// The facts each cached backend contributes are kept per resourceVersion.
#include <map>
#include <mutex>

#include "backend_step.h"
#include "switchboard/api/constants.h"
#include "switchboard/kube/cache_shapes.h"

namespace switchboard::operator_controller {

rules::Context BackendReconciler::Facts::Build(const ReconcileContext& ctx,
                                               const api::BackendView& self) {
  rules::Context vc;
  if (self.kind() != api::kBackendNats) return vc;
  const std::string server = self.server().ToString();
  const std::string prefix = self.subject_prefix();
  const std::string user = self.username();
  const std::string me = self.key().ToString();
  auto nested = [](const std::string& a, const std::string& b) {
    return a.size() > b.size() && a.compare(0, b.size(), b) == 0 && a[b.size()] == '.';
  };
  std::vector<kube::ObjectPtr> all = ctx.backends->List();
  std::lock_guard lock(mu);
  std::map<std::string, Entry> fresh;
  for (const auto& o : all) {
    const std::string key = kube::ObjectKeyOf(*o);
    auto it = by_key.find(key);
    Entry e;
    const auto& meta = (*o)["metadata"];
    auto rv = meta.find("resourceVersion");
    const std::string* version =
        rv != meta.end() && rv->is_string() ? &rv->get_ref<const std::string&>() : nullptr;
    if (it != by_key.end() && version && it->second.version == *version) {
      e = std::move(it->second);
    } else {
      api::BackendView v(*o);
      e = {version ? *version : "", v.kind(), v.server().ToString(), v.subject_prefix(),
           v.username()};
    }
    if (e.kind == api::kBackendNats && e.server == server && key != me &&
        (e.prefix == prefix || e.user == user || nested(e.prefix, prefix) ||
         nested(prefix, e.prefix))) {
      vc.backends.push_back(kube::ApiShaped(*o));
    }
    fresh.emplace(key, std::move(e));
  }
  by_key = std::move(fresh);
  const api::ObjectKey sk = self.server();
  if (auto s = ctx.servers->Get(sk.ns, sk.name)) vc.servers.push_back(kube::ApiShaped(*s));
  return vc;
}

BackendReconciler::BackendReconciler(ReconcileContext ctx)
    : ctx_(std::move(ctx)), facts_(std::make_unique<Facts>()) {}
BackendReconciler::~BackendReconciler() = default;

}  // namespace switchboard::operator_controller
