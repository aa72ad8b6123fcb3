// NatsServer rules that need only the object itself.
#include <optional>
#include <set>
#include <string_view>

#include "rules.h"
#include "switchboard/api/constants.h"
#include "switchboard/api/json_fields.h"
#include "switchboard/api/names.h"
#include "switchboard/api/quantity.h"
#include "switchboard/api/usage.h"
#include "switchboard/api/values.h"

namespace switchboard::rules::internal {
namespace {

using api::Field;
using api::Path;

std::string Mi(int64_t bytes) {
  return api::FormatBytes(bytes) + " (" + std::to_string(bytes) + " bytes)";
}

// spec.provisioning, after defaulting (mode is always there unless the
// object was not defaulted).
void CheckProvisioning(const nlohmann::json* provisioning,
                       std::optional<std::string_view> config_secret, Sink& sink) {
  auto mode = api::String(Field(provisioning, "mode"));
  if (mode && *mode != api::kProvisioningIncludeFile && *mode != api::kProvisioningAuthCallout) {
    sink.Error("provisioning", "spec.provisioning.mode",
               Quote(*mode) + " is not a provisioning mode; use IncludeFile or AuthCallout");
    return;
  }
  bool callout = mode && *mode == api::kProvisioningAuthCallout;
  const auto* block = Field(provisioning, "authCallout");
  if (block != nullptr && !block->is_null() && !callout) {
    sink.Error("provisioning", "spec.provisioning.authCallout",
               "is only used with mode: AuthCallout (mode is " +
                   std::string(mode.value_or(api::kDefaultProvisioning)) +
                   "); set spec.provisioning.mode: AuthCallout or remove authCallout");
  }
  if (auto account = api::String(Field(block, "account"))) {
    if (std::string err = api::CheckCalloutAccount(*account); !err.empty()) {
      sink.Error("provisioning", "spec.provisioning.authCallout.account",
                 Quote(*account) + " " + err);
    }
  }
  if (auto dir = api::String(Field(block, "resolverDir"))) {
    const bool safe = dir->starts_with('/') && dir->find("..") == std::string::npos &&
                      dir->find_first_not_of(
                          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                          "0123456789._/-") == std::string::npos;
    if (!safe) {
      sink.Error("provisioning", "spec.provisioning.authCallout.resolverDir",
                 Quote(*dir) +
                     " is not an absolute path of letters, digits and . _ / - (without \"..\"); "
                     "use e.g. /data/resolver on a volume the NATS "
                     "server can write");
    }
  }
  if (auto name = api::String(Field(block, "secretName"))) {
    if (std::string err = api::CheckDnsSubdomain(*name); !err.empty()) {
      sink.Error("name", "spec.provisioning.authCallout.secretName", Quote(*name) + " " + err);
    } else if (callout && config_secret && *name == *config_secret) {
      sink.Error("secret-collision", "spec.provisioning.authCallout.secretName",
                 "Secret " + Quote(*name) +
                     " is also spec.config.secretName; the operator writes the static config "
                     "and the callout keys into two Secrets: use a different Secret name (the "
                     "default is <name>" +
                     std::string(api::kCalloutSecretSuffix) + ")");
    }
  }
}

// spec.installationLimits: its values, overrides, the isolation it needs
// and its maxPayload within the server's (`payload`, when valid).
void CheckInstallationLimits(const nlohmann::json* spec, std::optional<int64_t> payload,
                             std::optional<std::string_view> isolation, Sink& sink) {
  const auto* block = Field(spec, "installationLimits");
  const api::InstallationLimits limits = CheckLimitsBlock(block, "spec.installationLimits", sink);
  if (auto o = api::String(Field(block, "overrides"))) {
    if (*o != api::kOverridesLowerOnly && *o != api::kOverridesLowerOrRaise) {
      sink.Error("installation-limits", "spec.installationLimits.overrides",
                 Quote(*o) + " is not an overrides policy; use " +
                     std::string(api::kOverridesLowerOnly) + " or " +
                     std::string(api::kOverridesLowerOrRaise));
    }
  }
  if (LimitsSet(block) && isolation.value_or(api::kDefaultIsolation) != api::kIsolationAccounts) {
    auto mode = api::String(Field(Field(spec, "provisioning"), "mode"));
    sink.Error("installation-limits", "spec.installationLimits",
               "needs isolation: Accounts: " +
                   api::LimitsNeedAccounts(mode && *mode == api::kProvisioningAuthCallout));
  }
  if (limits.max_payload && payload && api::CheckMaxPayload(*payload).empty() &&
      *limits.max_payload > *payload) {
    sink.Error("installation-limits", "spec.installationLimits.maxPayload",
               "is " + Mi(*limits.max_payload) + ", more than spec.maxPayload " + Mi(*payload) +
                   "; a client gets the smaller of the two: lower installationLimits.maxPayload "
                   "or raise spec.maxPayload");
  }
}

}  // namespace

void CheckServer(const nlohmann::json& object, Sink& sink) {
  const auto* spec = Field(object, "spec");
  if (auto url = api::String(Field(spec, "url"))) CheckNatsUrls(*url, "spec.url", sink);

  auto payload = ByteQuantity(Field(spec, "maxPayload"), "spec.maxPayload", sink);
  if (payload) {
    if (std::string err = api::CheckMaxPayload(*payload); !err.empty()) {
      sink.Error("max-payload", "spec.maxPayload", std::move(err));
    } else if (*payload > api::kEngineMaxPayload) {
      sink.Warn("max-payload", "spec.maxPayload",
                "is " + Mi(*payload) +
                    "; above 16Mi NATS warns and every client buffers more per message; 16Mi is "
                    "what the engine needs");
    }
  }
  const auto* pending_field = Field(spec, "maxPending");
  auto pending = ByteQuantity(pending_field, "spec.maxPending", sink);
  if (pending) {
    if (*pending > api::kNatsMaxPayloadLimit) {
      sink.Error("max-pending", "spec.maxPending",
                 "is " + Mi(*pending) + ", above 64Mi; set at most 64Mi");
    } else if (*pending < 1) {
      sink.Error("max-pending", "spec.maxPending", "must be positive; e.g. 64Mi");
    }
  }
  int64_t effective_pending = pending.value_or(api::kNatsDefaultMaxPending);
  if (payload && *payload <= api::kNatsMaxPayloadLimit && *payload > effective_pending &&
      (pending || pending_field == nullptr || pending_field->is_null())) {
    sink.Error("max-pending", "spec.maxPayload",
               "is " + Mi(*payload) + ", more than spec.maxPending " + Mi(effective_pending) +
                   "; nats-server exits when max_payload exceeds max_pending: lower maxPayload "
                   "or raise maxPending");
  }

  auto iso = api::String(Field(spec, "isolation"));
  if (iso && *iso != api::kIsolationPermissions && *iso != api::kIsolationAccounts) {
    sink.Error("isolation", "spec.isolation",
               Quote(*iso) + " is not an isolation mode; use Permissions or Accounts");
  }
  CheckInstallationLimits(spec, payload, iso, sink);
  const auto* config = Field(spec, "config");
  auto config_secret = api::String(Field(config, "secretName"));
  if (config_secret) {
    if (std::string err = api::CheckDnsSubdomain(*config_secret); !err.empty()) {
      sink.Error("name", "spec.config.secretName", Quote(*config_secret) + " " + err);
    }
  }
  CheckProvisioning(Field(spec, "provisioning"), config_secret, sink);
  const api::NatsServerView view(object);
  if (config_secret && api::WritesUsageSystemSecret(view) && !view.name().empty() &&
      *config_secret == api::UsageSystemSecretName(view.name())) {
    sink.Error("secret-collision", "spec.config.secretName",
               "Secret " + Quote(*config_secret) +
                   " is also the usage system user's Secret (spec.usage.systemUser); the "
                   "operator writes the include file and the system user's password into two "
                   "Secrets: use a different Secret name (the default is <name>" +
                   std::string(api::kConfigSecretSuffix) + ")");
  }
  if (auto key = api::String(Field(config, "key"))) {
    if (std::string err = api::CheckSecretKey(*key); !err.empty()) {
      sink.Error("secret-ref", "spec.config.key", Quote(*key) + " " + err);
    }
  }
  const auto* ca = Path(object, {"spec", "tls", "caSecretRef"});
  if (auto name = api::String(Field(ca, "name"))) {
    if (std::string err = api::CheckDnsSubdomain(*name); !err.empty()) {
      sink.Error("name", "spec.tls.caSecretRef.name", Quote(*name) + " " + err);
    }
  }
  if (auto key = api::String(Field(ca, "key"))) {
    if (std::string err = api::CheckSecretKey(*key); !err.empty()) {
      sink.Error("secret-ref", "spec.tls.caSecretRef.key", Quote(*key) + " " + err);
    }
  }

  const auto* allowed = Field(spec, "allowedNamespaces");
  auto from = api::String(Field(allowed, "from"));
  std::string from_value(from.value_or(api::kDefaultAllowedFrom));
  if (from && *from != "Same" && *from != "All" && *from != "List") {
    sink.Error("allowed-namespaces", "spec.allowedNamespaces.from",
               Quote(*from) + " is not allowed; use Same, All or List");
  }
  const auto* names = Field(allowed, "names");
  if (names != nullptr && names->is_array() && names->size() > api::kMaxAllowedNamespaces) {
    sink.Error("allowed-namespaces", "spec.allowedNamespaces.names",
               "lists " + std::to_string(names->size()) + " namespaces, more than " +
                   std::to_string(api::kMaxAllowedNamespaces) +
                   " (the CRD's bound); use from: All, or split the installations over more "
                   "NatsServers");
  }
  if (names != nullptr && names->is_array()) {
    if (from_value != "List") {
      sink.Error("allowed-namespaces", "spec.allowedNamespaces.names",
                 "is only used with from: List (from is " + from_value +
                     "); set spec.allowedNamespaces.from: List or remove names");
    }
    std::set<std::string> seen;
    for (size_t i = 0; i < names->size(); ++i) {
      auto n = api::String(&(*names)[i]);
      if (!n) continue;
      std::string field = "spec.allowedNamespaces.names[" + std::to_string(i) + "]";
      if (std::string err = api::CheckDnsLabel(*n); !err.empty()) {
        sink.Error("name", field, Quote(*n) + " " + err);
      } else if (!seen.insert(std::string(*n)).second) {
        sink.Warn("allowed-namespaces", field, Quote(*n) + " is listed twice; remove one");
      }
    }
  }
  if (from_value == "List" && (names == nullptr || !names->is_array() || names->empty())) {
    sink.Error("allowed-namespaces", "spec.allowedNamespaces.names",
               "is required (and must not be empty) with from: List; list the namespaces that "
               "may bind, or use from: Same or All");
  }
}

}  // namespace switchboard::rules::internal
