#include "switchboard/api/views.h"

#include <algorithm>
#include <cmath>

#include "switchboard/api/constants.h"
#include "switchboard/api/json_fields.h"
#include "switchboard/api/names.h"
#include "switchboard/api/quantity.h"
#include "switchboard/common/numeric.h"

namespace switchboard::api {

std::optional<int64_t> Integer(const nlohmann::json* v) {
  if (v == nullptr) return std::nullopt;
  if (v->is_number_unsigned()) {
    uint64_t u = v->get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v->is_number_integer()) return v->get<int64_t>();
  if (v->is_number_float()) {
    return WholeToInt64(v->get<double>());
  }
  return std::nullopt;
}

namespace {

std::string Str(const nlohmann::json* v, std::string_view def = "") {
  auto s = String(v);
  return std::string(s ? *s : def);
}

// A string that is present and non-empty, else the default.
std::string NonEmpty(const nlohmann::json* v, std::string_view def) {
  auto s = String(v);
  return std::string(s && !s->empty() ? *s : def);
}

int64_t IntOr(const nlohmann::json* v, int64_t def) { return Integer(v).value_or(def); }

std::optional<SecretKeyRef> Ref(const nlohmann::json* ref, std::string_view default_key) {
  if (ref == nullptr || !ref->is_object()) return std::nullopt;
  return SecretKeyRef{Str(Field(ref, "name")), NonEmpty(Field(ref, "key"), default_key)};
}

// {maxConnections, maxSubscriptions, maxPayload} of a limits block.
InstallationLimits LimitsAt(const nlohmann::json* block) {
  InstallationLimits out;
  if (block == nullptr || !block->is_object()) return out;
  out.max_connections = Integer(Field(block, "maxConnections"));
  out.max_subscriptions = Integer(Field(block, "maxSubscriptions"));
  if (const auto* p = Field(block, "maxPayload"); p != nullptr && !p->is_null()) {
    auto r = ParseQuantity(*p);
    if (r.ok()) out.max_payload = *r;
  }
  return out;
}

}  // namespace

ObjectKey KeyOf(const nlohmann::json& o) { return {NamespaceOf(o), NameOf(o)}; }

std::string BackendView::kind() const { return Str(Path(*o_, {"spec", "kind"})); }

bool BackendView::has_nats() const {
  const auto* n = Path(*o_, {"spec", "nats"});
  return n != nullptr && n->is_object();
}

ObjectKey BackendView::server() const {
  const auto* ref = Path(*o_, {"spec", "nats", "serverRef"});
  return {NonEmpty(Field(ref, "namespace"), ns()), Str(Field(ref, "name"))};
}

std::optional<ObjectKey> BackendView::bound_server() const {
  if (kind() != kBackendNats) return std::nullopt;
  ObjectKey s = server();
  if (s.name.empty()) return std::nullopt;
  return s;
}

std::string BackendView::subject_prefix() const {
  return NonEmpty(Path(*o_, {"spec", "nats", "subjectPrefix"}), kDefaultSubjectPrefix);
}

std::string BackendView::username() const {
  auto u = String(Path(*o_, {"spec", "nats", "credentials", "username"}));
  if (u && !u->empty()) return std::string(*u);
  std::string n = name();
  if (n.empty()) return "";  // generateName: the name (and so the default) is not known yet
  return DefaultUsername(ns(), n);
}

std::optional<SecretKeyRef> BackendView::password_secret() const {
  return Ref(Path(*o_, {"spec", "nats", "credentials", "passwordSecretRef"}), kDefaultPasswordKey);
}

std::string BackendView::credentials_secret_name() const {
  auto ref = password_secret();
  if (ref && !ref->name.empty()) return ref->name;
  return DefaultCredentialsSecretName(name());
}

std::string BackendView::rotation_grace_period() const {
  return NonEmpty(Path(*o_, {"spec", "nats", "credentials", "rotationGracePeriod"}),
                  kDefaultRotationGracePeriod);
}

InstallationLimits BackendView::limits() const {
  return LimitsAt(Path(*o_, {"spec", "nats", "limits"}));
}

std::optional<SecretKeyRef> BackendView::rabbitmq_url_secret() const {
  return Ref(Path(*o_, {"spec", "rabbitmq", "urlSecretRef"}), kDefaultRabbitmqUrlKey);
}
int64_t BackendView::max_pub_chans() const {
  return IntOr(Path(*o_, {"spec", "rabbitmq", "maxPubChans"}), kDefaultMaxPubChans);
}
int64_t BackendView::max_sub_chans() const {
  return IntOr(Path(*o_, {"spec", "rabbitmq", "maxSubChans"}), kDefaultMaxSubChans);
}
int64_t BackendView::max_conns() const {
  return IntOr(Path(*o_, {"spec", "postgres", "maxConns"}), kDefaultMaxConns);
}
int64_t BackendView::min_conns() const {
  return IntOr(Path(*o_, {"spec", "postgres", "minConns"}), kDefaultMinConns);
}
std::string BackendView::env_secret_name() const {
  return NonEmpty(Path(*o_, {"spec", "output", "secretName"}), DefaultEnvSecretName(name()));
}

std::string NatsServerView::url() const { return Str(Path(*o_, {"spec", "url"})); }

std::optional<int64_t> NatsServerView::max_payload() const {
  const auto* v = Path(*o_, {"spec", "maxPayload"});
  if (v == nullptr || v->is_null()) return kEngineMaxPayload;
  auto r = ParseQuantity(*v);
  if (!r.ok()) return std::nullopt;
  return *r;
}

std::optional<int64_t> NatsServerView::max_pending() const {
  const auto* v = Path(*o_, {"spec", "maxPending"});
  if (v == nullptr || v->is_null()) return kNatsDefaultMaxPending;
  auto r = ParseQuantity(*v);
  if (!r.ok()) return std::nullopt;
  return *r;
}

std::string NatsServerView::isolation() const {
  return NonEmpty(Path(*o_, {"spec", "isolation"}), kDefaultIsolation);
}
InstallationLimits NatsServerView::installation_limits() const {
  return LimitsAt(Path(*o_, {"spec", "installationLimits"}));
}
bool NatsServerView::limits_raise_allowed() const {
  return Str(Path(*o_, {"spec", "installationLimits", "overrides"})) == kOverridesLowerOrRaise;
}
std::string NatsServerView::config_secret_name() const {
  return NonEmpty(Path(*o_, {"spec", "config", "secretName"}), DefaultConfigSecretName(name()));
}
std::string NatsServerView::provisioning_mode() const {
  return NonEmpty(Path(*o_, {"spec", "provisioning", "mode"}), kDefaultProvisioning);
}
bool NatsServerView::auth_callout() const {
  return provisioning_mode() == kProvisioningAuthCallout;
}
std::string NatsServerView::callout_account() const {
  return NonEmpty(Path(*o_, {"spec", "provisioning", "authCallout", "account"}),
                  kDefaultCalloutAccount);
}
std::string NatsServerView::callout_secret_name() const {
  return NonEmpty(Path(*o_, {"spec", "provisioning", "authCallout", "secretName"}),
                  DefaultCalloutSecretName(name()));
}
std::string NatsServerView::config_key() const {
  return NonEmpty(Path(*o_, {"spec", "config", "key"}), kDefaultConfigKey);
}
std::optional<SecretKeyRef> NatsServerView::ca_secret() const {
  return Ref(Path(*o_, {"spec", "tls", "caSecretRef"}), kDefaultCaKey);
}
std::string NatsServerView::allowed_from() const {
  return NonEmpty(Path(*o_, {"spec", "allowedNamespaces", "from"}), kDefaultAllowedFrom);
}
std::vector<std::string> NatsServerView::allowed_names() const {
  std::vector<std::string> out;
  const auto* names = Path(*o_, {"spec", "allowedNamespaces", "names"});
  if (names == nullptr || !names->is_array()) return out;
  for (const auto& n : *names) {
    if (n.is_string()) out.push_back(n.get<std::string>());
  }
  return out;
}

bool NatsServerView::AllowsNamespace(std::string_view backend_ns) const {
  std::string from = allowed_from();
  if (from == "All") return true;
  if (from == "List") {
    auto names = allowed_names();
    return std::find(names.begin(), names.end(), backend_ns) != names.end();
  }
  return backend_ns == ns();  // Same, and anything unknown: the safe reading
}

}  // namespace switchboard::api
