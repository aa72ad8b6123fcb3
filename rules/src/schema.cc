// The CRD schemas as small static tables: known fields, their types and the
// unconditionally required ones. Kubernetes rejects unknown fields under
// strict field validation (kubectl's default) and prunes them otherwise, so a
// typo like `subjectprefix` would silently fall back to a default: reported.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <span>

#include "rules.h"
#include "switchboard/api/constants.h"
#include "switchboard/common/numeric.h"

namespace switchboard::rules::internal {
namespace {

enum class Type { kString, kInt, kIntOrString, kBool, kObject, kStringList, kAnyObject, kAny };

struct FieldSpec {
  std::string_view name;
  Type type;
  std::span<const FieldSpec> children = {};
  bool required = false;
};

constexpr FieldSpec kSecretKeyRef[] = {
    {"name", Type::kString, {}, true},
    {"key", Type::kString},
};
constexpr FieldSpec kServerRef[] = {
    {"name", Type::kString, {}, true},
    {"namespace", Type::kString},
};
constexpr FieldSpec kCredentials[] = {
    {"username", Type::kString},
    {"passwordSecretRef", Type::kObject, kSecretKeyRef},
    {"rotationGracePeriod", Type::kString},
};
constexpr FieldSpec kLimits[] = {
    {"maxConnections", Type::kInt},
    {"maxSubscriptions", Type::kInt},
    {"maxPayload", Type::kIntOrString},
};
constexpr FieldSpec kNats[] = {
    {"serverRef", Type::kObject, kServerRef, true},
    {"subjectPrefix", Type::kString},
    {"credentials", Type::kObject, kCredentials},
    {"limits", Type::kObject, kLimits},
};
constexpr FieldSpec kRabbitmq[] = {
    {"urlSecretRef", Type::kObject, kSecretKeyRef, true},
    {"maxPubChans", Type::kInt},
    {"maxSubChans", Type::kInt},
    // Not part of the API: accepted here only so the rule can explain why
    // (backend_rules.cc) instead of a bare "unknown field".
    {"url", Type::kAny},
};
constexpr FieldSpec kPostgres[] = {
    {"maxConns", Type::kInt},
    {"minConns", Type::kInt},
};
constexpr FieldSpec kOutput[] = {
    {"secretName", Type::kString},
};
constexpr FieldSpec kBackendSpec[] = {
    {"kind", Type::kString, {}, true},      {"nats", Type::kObject, kNats},
    {"rabbitmq", Type::kObject, kRabbitmq}, {"postgres", Type::kObject, kPostgres},
    {"output", Type::kObject, kOutput},
};

constexpr FieldSpec kConfig[] = {
    {"secretName", Type::kString},
    {"key", Type::kString},
};
constexpr FieldSpec kAuthCallout[] = {
    {"account", Type::kString},
    {"secretName", Type::kString},
    {"resolverDir", Type::kString},
};
constexpr FieldSpec kProvisioning[] = {
    {"mode", Type::kString},
    {"authCallout", Type::kObject, kAuthCallout},
};
constexpr FieldSpec kTls[] = {
    {"caSecretRef", Type::kObject, kSecretKeyRef},
};
constexpr FieldSpec kAllowed[] = {
    {"from", Type::kString},
    {"names", Type::kStringList},
};
constexpr FieldSpec kInstallationLimits[] = {
    {"maxConnections", Type::kInt},
    {"maxSubscriptions", Type::kInt},
    {"maxPayload", Type::kIntOrString},
    {"overrides", Type::kString},
};
constexpr FieldSpec kUsage[] = {
    {"systemUser", Type::kBool},
};
constexpr FieldSpec kServerSpec[] = {
    {"url", Type::kString, {}, true},
    {"maxPayload", Type::kIntOrString},
    {"maxPending", Type::kIntOrString},
    {"isolation", Type::kString},
    {"installationLimits", Type::kObject, kInstallationLimits},
    {"provisioning", Type::kObject, kProvisioning},
    {"config", Type::kObject, kConfig},
    {"tls", Type::kObject, kTls},
    {"allowedNamespaces", Type::kObject, kAllowed},
    {"usage", Type::kObject, kUsage},
};

constexpr FieldSpec kTopLevel[] = {
    {"apiVersion", Type::kString},  {"kind", Type::kString},
    {"metadata", Type::kAnyObject}, {"spec", Type::kAnyObject},  // walked by CheckSchema
    {"status", Type::kAnyObject},
};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string Suggest(std::string_view unknown, std::span<const FieldSpec> fields) {
  if (unknown.size() > 64) return "";
  std::string_view best;
  size_t best_d = 3;
  for (const auto& f : fields) {
    if (f.name == "url" && fields.data() == kRabbitmq) continue;
    size_t d = Lower(unknown) == Lower(f.name) ? 0 : EditDistance(unknown, f.name);
    if (d < best_d) {
      best_d = d;
      best = f.name;
    }
  }
  return std::string(best);
}

std::string KnownList(std::span<const FieldSpec> fields) {
  std::string out;
  for (const auto& f : fields) {
    if (f.name == "url" && fields.data() == kRabbitmq) continue;
    if (!out.empty()) out += ", ";
    out += f.name;
  }
  return out;
}

bool CheckType(const nlohmann::json& v, Type type, const std::string& path, Sink& sink) {
  auto bad = [&](std::string want, std::string fix) {
    sink.Error("type", path, "must be " + want + ", not " + TypeName(v) + "; " + fix);
    return false;
  };
  switch (type) {
    case Type::kString:
      if (v.is_string()) return true;
      return bad("a string", "quote the value");
    case Type::kInt:
      if (v.is_number_integer()) return true;
      // A whole number written as 3.0 or 1e3 is an integer; 1e300 is not
      // one that fits (and casting it would be undefined behaviour).
      if (v.is_number_float() && WholeToInt64(v.get<double>())) return true;
      if (v.is_number_float() && std::isfinite(v.get<double>()) &&
          std::trunc(v.get<double>()) == v.get<double>()) {
        return bad("an integer that fits in 64 bits", "write a much smaller whole number");
      }
      if (v.is_string()) return bad("an integer", "write the number without quotes");
      return bad("an integer", "write a whole number");
    case Type::kIntOrString:
      if (v.is_number() || v.is_string()) return true;
      return bad("an integer or a quantity string", "write bytes like 16777216 or 16Mi");
    case Type::kBool:
      if (v.is_boolean()) return true;
      return bad("true or false", "write true or false without quotes");
    case Type::kObject:
    case Type::kAnyObject:
      if (v.is_object()) return true;
      return bad("an object (a mapping)", "write the nested fields under it");
    case Type::kStringList:
      if (v.is_array()) {
        bool ok = true;
        for (size_t i = 0; i < v.size(); ++i) {
          if (!v[i].is_string()) {
            sink.Error("type", path + "[" + std::to_string(i) + "]",
                       "must be a string, not " + TypeName(v[i]) + "; quote the value");
            ok = false;
          }
        }
        return ok;
      }
      return bad("a list of strings", "write a YAML list like [a, b]");
    case Type::kAny:
      return true;
  }
  return true;
}

void Walk(const nlohmann::json& obj, std::span<const FieldSpec> fields, const std::string& prefix,
          Sink& sink) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string& key = it.key();
    std::string path = prefix.empty() ? key : prefix + "." + key;
    auto f = std::find_if(fields.begin(), fields.end(),
                          [&](const FieldSpec& s) { return s.name == key; });
    if (f == fields.end()) {
      std::string hint = Suggest(key, fields);
      sink.Error("unknown-field", path,
                 "unknown field; " +
                     (hint.empty() ? "known fields here are " + KnownList(fields)
                                   : "did you mean \"" + hint + "\"?") +
                     " (the API server rejects or drops unknown fields)");
      continue;
    }
    if (it.value().is_null()) continue;  // null is "absent", as the API server prunes it
    if (!CheckType(it.value(), f->type, path, sink)) continue;
    if (f->type == Type::kObject) Walk(it.value(), f->children, path, sink);
  }
  for (const auto& f : fields) {
    if (!f.required) continue;
    auto it = obj.find(f.name);
    if (it == obj.end() || it->is_null()) {
      std::string path = prefix.empty() ? std::string(f.name) : prefix + "." + std::string(f.name);
      sink.Error("required", path, "required; add it");
    }
  }
}

}  // namespace

bool CheckSchema(const nlohmann::json& object, Sink& sink) {
  if (!object.is_object()) {
    sink.Error("type", "", "the object must be a JSON/YAML mapping, not " + TypeName(object));
    return false;
  }
  std::string kind = object.contains("kind") && object["kind"].is_string()
                         ? object["kind"].get<std::string>()
                         : "";
  bool backend = kind == api::kKindBackend;
  Walk(object, kTopLevel, "", sink);
  const auto spec = object.find("spec");
  if (spec == object.end() || spec->is_null()) {
    sink.Error("required", "spec", "required; add the spec of the " + kind);
    return false;
  }
  if (!spec->is_object()) return false;  // reported by Walk
  Walk(*spec, backend ? std::span<const FieldSpec>(kBackendSpec) : kServerSpec, "spec", sink);
  return true;
}

}  // namespace switchboard::rules::internal
