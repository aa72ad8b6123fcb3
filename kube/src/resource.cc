#include "switchboard/kube/resource.h"

namespace switchboard::kube {

std::string ResourceRef::ApiVersion() const {
  return group.empty() ? version : group + "/" + version;
}

std::string ResourceRef::GroupResource() const {
  return group.empty() ? plural : plural + "." + group;
}

bool operator==(const ResourceRef& a, const ResourceRef& b) {
  return a.group == b.group && a.version == b.version && a.plural == b.plural && a.kind == b.kind &&
         a.namespaced == b.namespaced;
}

namespace resources {
ResourceRef Secret() { return {"", "v1", "secrets", "Secret", true}; }
ResourceRef ConfigMap() { return {"", "v1", "configmaps", "ConfigMap", true}; }
ResourceRef Event() { return {"", "v1", "events", "Event", true}; }
ResourceRef EventsV1() { return {"events.k8s.io", "v1", "events", "Event", true}; }
ResourceRef Namespace() { return {"", "v1", "namespaces", "Namespace", false}; }
ResourceRef ServiceAccount() { return {"", "v1", "serviceaccounts", "ServiceAccount", true}; }
ResourceRef Lease() { return {"coordination.k8s.io", "v1", "leases", "Lease", true}; }
ResourceRef PubSubBackend() {
  return {std::string(kSwitchboardGroup), std::string(kSwitchboardVersion), "pubsubbackends",
          std::string(api::kKindBackend), true};
}
ResourceRef NatsServer() {
  return {std::string(kSwitchboardGroup), std::string(kSwitchboardVersion), "natsservers",
          std::string(api::kKindServer), true};
}
}  // namespace resources

std::string ObjectKey(std::string_view ns, std::string_view name) {
  if (ns.empty()) return std::string(name);
  std::string k(ns);
  k += '/';
  k += name;
  return k;
}

std::string ObjectKeyOf(const json& obj) { return ObjectKey(NamespaceOf(obj), NameOf(obj)); }

void SplitObjectKey(std::string_view key, std::string* ns, std::string* name) {
  auto slash = key.find('/');
  if (slash == std::string_view::npos) {
    ns->clear();
    *name = std::string(key);
  } else {
    *ns = std::string(key.substr(0, slash));
    *name = std::string(key.substr(slash + 1));
  }
}

}  // namespace switchboard::kube
