#include "switchboard/api/names.h"

#include "switchboard/api/constants.h"
#include "switchboard/api/limits.h"

namespace switchboard::api {
namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// One RFC 1123 label without the length rule; empty on success.
std::string CheckLabelChars(std::string_view label) {
  if (label.empty()) return "must not contain an empty label (\"..\" or a leading/trailing dot)";
  for (char c : label) {
    if (!IsLowerAlnum(c) && c != '-') {
      if (c >= 'A' && c <= 'Z') return "must be lowercase (RFC 1123): use lowercase letters";
      return std::string("must consist of lowercase letters, digits, '-' and '.' (RFC 1123); '") +
             c + "' is not allowed";
    }
  }
  if (!IsLowerAlnum(label.front()) || !IsLowerAlnum(label.back())) {
    return "must start and end with a lowercase letter or digit (RFC 1123)";
  }
  return "";
}

std::string AtMost(size_t n) { return "must be at most " + std::to_string(n) + " characters"; }

}  // namespace

std::string CheckDnsSubdomain(std::string_view value) {
  if (value.empty()) return "must not be empty";
  if (value.size() > kMaxDnsSubdomainLength) return AtMost(kMaxDnsSubdomainLength);
  size_t start = 0;
  while (true) {
    size_t dot = value.find('.', start);
    std::string_view label =
        value.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (std::string err = CheckLabelChars(label); !err.empty()) return err;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return "";
}

std::string CheckDnsLabel(std::string_view value) {
  if (value.empty()) return "must not be empty";
  if (value.size() > kMaxDnsLabelLength) return AtMost(kMaxDnsLabelLength);
  if (value.find('.') != std::string_view::npos) {
    return "must not contain '.' (an RFC 1123 label)";
  }
  return CheckLabelChars(value);
}

std::string CheckSecretKey(std::string_view value) {
  if (value.empty()) return "must not be empty";
  if (value.size() > kMaxSecretKeyLength) return AtMost(kMaxSecretKeyLength);
  if (value == "." || value == "..") return "must not be '.' or '..'";
  if (value.substr(0, 2) == "..") return "must not start with '..'";
  for (char c : value) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.';
    if (!ok) return "must consist of letters, digits, '-', '_' and '.' (a Secret data key)";
  }
  return "";
}

std::string CheckCalloutAccount(std::string_view value) {
  if (value.empty()) return "must not be empty";
  if (value.size() > kMaxCalloutAccountLength) return AtMost(kMaxCalloutAccountLength);
  if (value == kNatsGlobalAccount) {
    return "is nats-server's global account (users of no account); choose a named account, e.g. " +
           std::string(kDefaultCalloutAccount);
  }
  for (char c : value) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_';
    if (!ok) return "must consist of letters, digits, '-' and '_' (a NATS account name)";
  }
  if (value == kCalloutAuthAccount) {
    return "is the account of the authorizer's own user (the callout requests carry "
           "passwords); choose another name, e.g. " +
           std::string(kDefaultCalloutAccount);
  }
  if (value == kCalloutSystemAccount) {
    return "is the system account of the static config; choose another name, e.g. " +
           std::string(kDefaultCalloutAccount);
  }
  return "";
}

std::string DefaultEnvSecretName(std::string_view backend_name) {
  return std::string(backend_name) + std::string(kEnvSecretSuffix);
}
std::string DefaultCredentialsSecretName(std::string_view backend_name) {
  return std::string(backend_name) + std::string(kCredentialsSecretSuffix);
}
std::string DefaultUsername(std::string_view ns, std::string_view name) {
  return std::string(ns) + "-" + std::string(name);
}
std::string DefaultConfigSecretName(std::string_view server_name) {
  return std::string(server_name) + std::string(kConfigSecretSuffix);
}
std::string DefaultCalloutSecretName(std::string_view server_name) {
  return std::string(server_name) + std::string(kCalloutSecretSuffix);
}
std::string QualifiedName(std::string_view ns, std::string_view name) {
  if (ns.empty()) return std::string(name);
  return std::string(ns) + "/" + std::string(name);
}

}  // namespace switchboard::api
