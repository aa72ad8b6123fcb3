// Schema defaults (docs/api.md): DefaultedCopy and the JSON Patch that
// produces it. Only absent or null members are filled; a present value,
// even a wrong one, is left for Validate to report.
#include "rules.h"
#include "switchboard/api/constants.h"
#include "switchboard/api/json_fields.h"
#include "switchboard/api/names.h"
#include "switchboard/api/views.h"

namespace switchboard::rules {
namespace {

bool Missing(const nlohmann::json& obj, std::string_view key) {
  auto it = obj.find(key);
  return it == obj.end() || it->is_null();
}

template <typename T>
void Default(nlohmann::json& obj, std::string_view key, T value) {
  if (Missing(obj, key)) obj[std::string(key)] = std::move(value);
}

// obj[key] as an object, created when absent or null; nullptr when it holds
// something else (left for Validate).
nlohmann::json* Child(nlohmann::json& obj, std::string_view key) {
  if (Missing(obj, key)) obj[std::string(key)] = nlohmann::json::object();
  auto& c = obj[std::string(key)];
  return c.is_object() ? &c : nullptr;
}

nlohmann::json* ExistingChild(nlohmann::json& obj, std::string_view key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_object() ? &*it : nullptr;
}

void DefaultBackend(nlohmann::json& o, const std::string& ns, const std::string& name) {
  auto* spec = ExistingChild(o, "spec");
  if (spec == nullptr) return;
  auto kind = api::String(api::Field(*spec, "kind"));
  if (!kind) return;
  if (*kind == api::kBackendNats) {
    if (auto* nats = ExistingChild(*spec, "nats")) {
      if (auto* ref = ExistingChild(*nats, "serverRef"); ref && !ns.empty()) {
        Default(*ref, "namespace", ns);
      }
      Default(*nats, "subjectPrefix", std::string(api::kDefaultSubjectPrefix));
      if (auto* creds = Child(*nats, "credentials")) {
        if (!ns.empty() && !name.empty()) {
          Default(*creds, "username", api::DefaultUsername(ns, name));
        }
        Default(*creds, "rotationGracePeriod", std::string(api::kDefaultRotationGracePeriod));
        if (auto* pw = ExistingChild(*creds, "passwordSecretRef")) {
          Default(*pw, "key", std::string(api::kDefaultPasswordKey));
        }
      }
    }
  } else if (*kind == api::kBackendRabbitmq) {
    if (auto* rmq = ExistingChild(*spec, "rabbitmq")) {
      if (auto* url = ExistingChild(*rmq, "urlSecretRef")) {
        Default(*url, "key", std::string(api::kDefaultRabbitmqUrlKey));
      }
      Default(*rmq, "maxPubChans", api::kDefaultMaxPubChans);
      Default(*rmq, "maxSubChans", api::kDefaultMaxSubChans);
    }
  } else if (*kind == api::kBackendPostgres) {
    if (auto* pg = ExistingChild(*spec, "postgres")) {
      Default(*pg, "maxConns", api::kDefaultMaxConns);
      Default(*pg, "minConns", api::kDefaultMinConns);
    }
  }
  if (!name.empty()) {
    if (auto* out = Child(*spec, "output"))
      Default(*out, "secretName", api::DefaultEnvSecretName(name));
  }
}

void DefaultServer(nlohmann::json& o, const std::string& name) {
  auto* spec = Child(o, "spec");
  if (spec == nullptr) return;
  Default(*spec, "maxPayload", std::string(api::kDefaultMaxPayload));
  Default(*spec, "isolation", std::string(api::kDefaultIsolation));
  // authCallout is never added: a defaulted block would stay behind when the
  // user switches back to IncludeFile, and authCallout is refused there.
  if (auto* provisioning = Child(*spec, "provisioning")) {
    Default(*provisioning, "mode", std::string(api::kDefaultProvisioning));
    if (auto* callout = ExistingChild(*provisioning, "authCallout")) {
      Default(*callout, "account", std::string(api::kDefaultCalloutAccount));
      if (!name.empty()) Default(*callout, "secretName", api::DefaultCalloutSecretName(name));
    }
  }
  if (auto* limits = ExistingChild(*spec, "installationLimits")) {
    Default(*limits, "overrides", std::string(api::kDefaultOverrides));
  }
  if (auto* config = Child(*spec, "config")) {
    if (!name.empty()) Default(*config, "secretName", api::DefaultConfigSecretName(name));
    Default(*config, "key", std::string(api::kDefaultConfigKey));
  }
  if (auto* tls = ExistingChild(*spec, "tls")) {
    if (auto* ca = ExistingChild(*tls, "caSecretRef"))
      Default(*ca, "key", std::string(api::kDefaultCaKey));
  }
  if (auto* allowed = Child(*spec, "allowedNamespaces")) {
    Default(*allowed, "from", std::string(api::kDefaultAllowedFrom));
  }
}

void ApplyDefaults(nlohmann::json& o, const std::string& default_namespace) {
  if (!o.is_object()) return;
  std::string kind = api::KindOf(o);
  std::string ns = api::NamespaceOf(o);
  if (ns.empty()) ns = default_namespace;
  std::string name = api::NameOf(o);
  if (kind == api::kKindBackend) DefaultBackend(o, ns, name);
  if (kind == api::kKindServer) DefaultServer(o, name);
}

// RFC 6901: '~' -> "~0", '/' -> "~1".
std::string Escape(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

void Diff(const nlohmann::json& a, const nlohmann::json& b, const std::string& path,
          nlohmann::json& ops) {
  for (auto it = b.begin(); it != b.end(); ++it) {
    std::string p = path + "/" + Escape(it.key());
    auto ait = a.find(it.key());
    if (ait == a.end()) {
      ops.push_back({{"op", "add"}, {"path", p}, {"value", it.value()}});
    } else if (ait->is_object() && it.value().is_object()) {
      Diff(*ait, it.value(), p, ops);
    } else if (*ait != it.value()) {
      ops.push_back({{"op", "replace"}, {"path", p}, {"value", it.value()}});
    }
  }
}

}  // namespace

nlohmann::json DefaultedCopy(const nlohmann::json& object, const std::string& default_namespace) {
  nlohmann::json copy = object;
  ApplyDefaults(copy, default_namespace);
  return copy;
}

nlohmann::json DefaultedCopy(const nlohmann::json& object) { return DefaultedCopy(object, ""); }

nlohmann::json DefaultingPatch(const nlohmann::json& object, const std::string& default_namespace) {
  nlohmann::json ops = nlohmann::json::array();
  if (!object.is_object()) return ops;
  nlohmann::json defaulted = DefaultedCopy(object, default_namespace);
  // Defaults live under spec only; comparing just spec keeps large metadata
  // and status out of the diff.
  auto a = object.find("spec");
  auto b = defaulted.find("spec");
  if (b == defaulted.end()) return ops;
  if (a == object.end()) {
    ops.push_back({{"op", "add"}, {"path", "/spec"}, {"value", *b}});
  } else if (a->is_object() && b->is_object()) {
    Diff(*a, *b, "/spec", ops);
  } else if (*a != *b) {
    ops.push_back({{"op", "replace"}, {"path", "/spec"}, {"value", *b}});
  }
  return ops;
}

nlohmann::json DefaultingPatch(const nlohmann::json& object) { return DefaultingPatch(object, ""); }

namespace internal {

nlohmann::json DefaultedForValidation(const nlohmann::json& object,
                                      const std::string& default_namespace) {
  // Labels, annotations, managedFields and the rest of metadata are not
  // read by any rule and can be most of a large object: leave them out of
  // the copy.
  nlohmann::json copy;
  if (object.is_object()) {
    copy = nlohmann::json::object();
    // The keys come in order: each one goes at the end (no search).
    auto& members = copy.get_ref<nlohmann::json::object_t&>();
    for (const auto& [key, value] : object.get_ref<const nlohmann::json::object_t&>()) {
      if (key != "metadata" || !value.is_object()) {
        members.emplace_hint(members.end(), key, value);
        continue;
      }
      nlohmann::json& md =
          members.emplace_hint(members.end(), key, nlohmann::json::object())->second;
      for (const char* field : {"name", "generateName", "namespace", "uid", "creationTimestamp"}) {
        if (auto f = value.find(field); f != value.end()) md[field] = *f;
      }
    }
  } else {
    copy = object;
  }
  if (copy.is_object() && !default_namespace.empty()) {
    auto md = copy.find("metadata");
    if (md != copy.end() && md->is_object() && api::NamespaceOf(copy).empty()) {
      (*md)["namespace"] = default_namespace;
    }
  }
  ApplyDefaults(copy, default_namespace);
  return copy;
}

}  // namespace internal
}  // namespace switchboard::rules
