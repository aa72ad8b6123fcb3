// Read-only, typed views of PubSubBackend and NatsServer JSON with the
// defaults of docs/api.md applied on read. The operator (operator_logic and
// operator_controller) and the rules (and so the webhook and the CLI, through
// them) use them, so a default is computed in one place.
//
// A view borrows the json (which must outlive it) and never throws: a field
// that is absent or of the wrong type reads as its default (Validate reports
// wrong types; readers of a validated object never see them).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/api/metadata.h"

namespace switchboard::api {

struct ObjectKey {
  std::string ns;
  std::string name;
  std::string ToString() const { return ns.empty() ? name : ns + "/" + name; }
  bool operator==(const ObjectKey&) const = default;
  auto operator<=>(const ObjectKey&) const = default;
};

struct SecretKeyRef {
  std::string name;
  std::string key;
  bool operator==(const SecretKeyRef&) const = default;
};

// Per-installation limits as NATS enforces them on an account: connections
// of the installation across the cluster, subscriptions and payload bytes
// per connection. nullopt: no limit from this source. A plain struct with
// no NATS or JWT types: the include file's account `limits` and an account
// JWT are both written from it.
struct InstallationLimits {
  std::optional<int64_t> max_connections;
  std::optional<int64_t> max_subscriptions;
  std::optional<int64_t> max_payload;  // bytes
  bool empty() const { return !max_connections && !max_subscriptions && !max_payload; }
  bool operator==(const InstallationLimits&) const = default;
};

// namespace/name of any object (metadata.h reads the rest).
ObjectKey KeyOf(const nlohmann::json& object);

class BackendView {
 public:
  explicit BackendView(const nlohmann::json& object) : o_(&object) {}

  std::string name() const { return NameOf(*o_); }
  std::string ns() const { return NamespaceOf(*o_); }
  ObjectKey key() const { return KeyOf(*o_); }
  std::string kind() const;  // spec.kind; "" when absent

  // nats block (meaningful when kind() == "nats").
  bool has_nats() const;
  ObjectKey server() const;  // serverRef; namespace defaults to ns()
  // The NatsServer this backend is bound to: server() when spec.kind is nats
  // and serverRef.name is given, otherwise none. Everything that asks "is
  // this backend on server S" (the render, wake-ups, the finalizer) asks this.
  std::optional<ObjectKey> bound_server() const;
  std::string subject_prefix() const;                   // default hatchet.pubsub
  std::string username() const;                         // default <namespace>-<name>
  std::optional<SecretKeyRef> password_secret() const;  // only when given; key default password
  // Where the password lives: passwordSecretRef.name or <name>-nats-credentials.
  std::string credentials_secret_name() const;
  std::string rotation_grace_period() const;  // default 10m
  // spec.nats.limits as written (no defaults: the server's apply in
  // operator_logic::EffectiveLimits). A field that is absent or does not
  // parse (maxPayload: api::ParseQuantity) reads as nullopt; the rules
  // report the latter.
  InstallationLimits limits() const;

  // rabbitmq block.
  std::optional<SecretKeyRef> rabbitmq_url_secret() const;  // key default url
  int64_t max_pub_chans() const;                            // default 10
  int64_t max_sub_chans() const;                            // default 20

  // postgres block.
  int64_t max_conns() const;  // default 5
  int64_t min_conns() const;  // default 1

  std::string env_secret_name() const;  // spec.output.secretName, default <name>-pubsub-env

  const nlohmann::json& json() const { return *o_; }

 private:
  const nlohmann::json* o_;
};

class NatsServerView {
 public:
  explicit NatsServerView(const nlohmann::json& object) : o_(&object) {}

  std::string name() const { return NameOf(*o_); }
  std::string ns() const { return NamespaceOf(*o_); }
  ObjectKey key() const { return KeyOf(*o_); }

  std::string url() const;  // the raw comma-separated seed list
  // Bytes; default 16Mi. nullopt when the field does not parse.
  std::optional<int64_t> max_payload() const;
  // Bytes; default 64Mi (NATS's own default). nullopt when it does not parse.
  std::optional<int64_t> max_pending() const;
  std::string isolation() const;  // default Permissions
  // spec.installationLimits: the defaults of the installations bound here
  // (as BackendView::limits reads them), and whether a backend may raise
  // them (overrides: LowerOrRaise; default LowerOnly).
  InstallationLimits installation_limits() const;
  bool limits_raise_allowed() const;
  std::string config_secret_name() const;  // default <name>-switchboard
  // spec.provisioning: how users reach NATS. mode IncludeFile (default) or
  // AuthCallout, as written (the rules refuse anything else).
  std::string provisioning_mode() const;
  bool auth_callout() const;                // mode is AuthCallout
  std::string callout_account() const;      // .authCallout.account, default HATCHET
  std::string callout_secret_name() const;  // .authCallout.secretName, default <name>-auth-callout
  std::string config_key() const;           // default switchboard.conf
  std::optional<SecretKeyRef> ca_secret() const;  // key default ca.crt
  std::string allowed_from() const;               // default Same
  std::vector<std::string> allowed_names() const;
  // Whether a PubSubBackend in `backend_ns` may bind (allowedNamespaces).
  bool AllowsNamespace(std::string_view backend_ns) const;

  const nlohmann::json& json() const { return *o_; }

 private:
  const nlohmann::json* o_;
};

}  // namespace switchboard::api
