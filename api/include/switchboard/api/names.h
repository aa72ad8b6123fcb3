// Kubernetes name rules and the names Switchboard derives from an object's
// name (docs/api.md). Pure functions.
#pragma once

#include <string>
#include <string_view>

namespace switchboard::api {

// Each checker returns an empty string when `value` is valid, otherwise what
// is wrong in words suitable after a field path ("must be at most 63
// characters"), mirroring k8s.io/apimachinery's validation messages.
std::string CheckDnsSubdomain(std::string_view value);  // RFC 1123 subdomain, <= 253
std::string CheckDnsLabel(std::string_view value);      // RFC 1123 label, <= 63 (namespaces)
std::string CheckSecretKey(std::string_view value);     // [-._a-zA-Z0-9]+, <= 253, not "."/".."
// spec.provisioning.authCallout.account: [A-Za-z0-9_-], 1 to 64
// characters, and not an account the callout's static config defines for
// itself (SWITCHBOARD_AUTH, SYS) nor nats-server's global account $G.
std::string CheckCalloutAccount(std::string_view value);
inline bool IsDnsSubdomain(std::string_view v) { return CheckDnsSubdomain(v).empty(); }
inline bool IsDnsLabel(std::string_view v) { return CheckDnsLabel(v).empty(); }

// Derived names (defaults from docs/api.md).
std::string DefaultEnvSecretName(std::string_view backend_name);          // <name>-pubsub-env
std::string DefaultCredentialsSecretName(std::string_view backend_name);  // <name>-nats-credentials
std::string DefaultUsername(std::string_view ns, std::string_view name);  // <namespace>-<name>
std::string DefaultConfigSecretName(std::string_view server_name);        // <name>-switchboard
std::string DefaultCalloutSecretName(std::string_view server_name);       // <name>-auth-callout

// "<namespace>/<name>", or just the name when the namespace is empty.
std::string QualifiedName(std::string_view ns, std::string_view name);

}  // namespace switchboard::api
