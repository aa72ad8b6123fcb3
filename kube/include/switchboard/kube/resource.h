// Which Kubernetes resource a call addresses (group, version, plural), and
// small accessors for object metadata. Pure; no I/O.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "switchboard/api/constants.h"
#include "switchboard/api/metadata.h"

namespace switchboard::kube {

using json = nlohmann::json;

// A group/version/resource plus its kind. `group` is empty for the core API
// ("/api/v1"); `namespaced` decides whether paths carry /namespaces/<ns>/.
struct ResourceRef {
  std::string group;
  std::string version;
  std::string plural;
  std::string kind;
  bool namespaced = true;

  // "v1" for the core group, "group/version" otherwise (an object's apiVersion).
  std::string ApiVersion() const;
  // "secrets" or "pubsubbackends.pubsub.switchboard.dev" (for messages).
  std::string GroupResource() const;
};

bool operator==(const ResourceRef& a, const ResourceRef& b);

// Our API group and version.
inline constexpr std::string_view kSwitchboardGroup = api::kGroup;
inline constexpr std::string_view kSwitchboardVersion = api::kVersion;

// Well-known resources. Each returns a fresh value (cheap; no static-init order issues).
namespace resources {
ResourceRef Secret();          // core/v1 secrets
ResourceRef ConfigMap();       // core/v1 configmaps
ResourceRef Event();           // core/v1 events
ResourceRef EventsV1();        // events.k8s.io/v1 events
ResourceRef Namespace();       // core/v1 namespaces (cluster-scoped)
ResourceRef ServiceAccount();  // core/v1 serviceaccounts
ResourceRef Lease();           // coordination.k8s.io/v1 leases
ResourceRef PubSubBackend();   // pubsub.switchboard.dev/v1alpha1 pubsubbackends
ResourceRef NatsServer();      // pubsub.switchboard.dev/v1alpha1 natsservers
}  // namespace resources

// metadata accessors (api/metadata.h); empty string when absent or not a
// string.
using api::NameOf;
using api::NamespaceOf;
using api::ResourceVersionOf;
using api::UidOf;

// Cache key: "namespace/name", or "name" for cluster-scoped objects (the
// client-go MetaNamespaceKeyFunc convention).
std::string ObjectKey(std::string_view ns, std::string_view name);
std::string ObjectKeyOf(const json& obj);
// Splits an ObjectKey back into namespace (may be empty) and name.
void SplitObjectKey(std::string_view key, std::string* ns, std::string* name);

}  // namespace switchboard::kube
