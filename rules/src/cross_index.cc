#include "cross_index.h"

#include <cstdint>
#include <set>

#include "switchboard/api/constants.h"
#include "switchboard/api/json_fields.h"
#include "switchboard/api/names.h"
#include "switchboard/common/base64.h"

namespace switchboard::rules::internal {
namespace {

constexpr size_t kSelf = SIZE_MAX;
constexpr size_t kMaxNamed = 3;  // other objects named in one message

std::string Join(const std::string& a, const std::string& b) { return a + "|" + b; }

// Proper ancestors of a dotted prefix: "a.b.c" -> "a", "a.b".
std::vector<std::string> Ancestors(const std::string& prefix) {
  std::vector<std::string> out;
  for (size_t i = prefix.find('.'); i != std::string::npos; i = prefix.find('.', i + 1)) {
    if (i > 0) out.push_back(prefix.substr(0, i));
  }
  return out;
}

// Secret data as the API server stores it; undecodable values read as empty
// (the rules then report the Secret's content as missing).
std::string Base64Decode(std::string_view in) { return base64::Decode(in).value_or(""); }

// The value of `key` in a Secret object, when present (data is base64).
std::optional<std::string> SecretValue(const nlohmann::json& secret, const std::string& key) {
  if (auto s = api::String(api::Path(secret, {"stringData", key}))) return std::string(*s);
  if (auto s = api::String(api::Path(secret, {"data", key}))) return Base64Decode(*s);
  return std::nullopt;
}

}  // namespace

std::string CrossIndex::Describe(size_t owner) const {
  const Owner& o = owners_[owner];
  return std::string(o.kind) + " " + o.key.ToString();
}

std::vector<CrossIndex::Claim> CrossIndex::ClaimsOf(const nlohmann::json& object, size_t owner) {
  std::vector<Claim> out;
  std::string kind = api::KindOf(object);
  if (kind == api::kKindBackend) {
    api::BackendView v(object);
    if (v.name().empty()) return out;
    out.push_back({owner, "the env Secret", "spec.output.secretName", true});
    std::string backend_kind = v.kind();
    if (backend_kind == api::kBackendNats) {
      if (auto pw = v.password_secret(); pw && !pw->name.empty()) {
        out.push_back(
            {owner, "the password Secret", "spec.nats.credentials.passwordSecretRef.name", false});
      } else {
        out.push_back({owner, "the generated credentials Secret", "metadata.name", true});
      }
    } else if (backend_kind == api::kBackendRabbitmq) {
      if (auto url = v.rabbitmq_url_secret(); url && !url->name.empty()) {
        out.push_back({owner, "the RabbitMQ URL Secret", "spec.rabbitmq.urlSecretRef.name", false});
      }
    }
  } else if (kind == api::kKindServer) {
    api::NatsServerView v(object);
    if (v.name().empty()) return out;
    out.push_back({owner, "the config Secret", "spec.config.secretName", true});
    if (auto ca = v.ca_secret(); ca && !ca->name.empty()) {
      out.push_back({owner, "the CA Secret", "spec.tls.caSecretRef.name", false});
    }
  }
  return out;
}

namespace {

// The Secret name a claim is about, read back from the object.
std::string ClaimedName(const nlohmann::json& object, std::string_view field) {
  std::string kind = api::KindOf(object);
  if (kind == api::kKindBackend) {
    api::BackendView v(object);
    if (field == "spec.output.secretName") return v.env_secret_name();
    if (field == "metadata.name") return api::DefaultCredentialsSecretName(v.name());
    if (field == "spec.nats.credentials.passwordSecretRef.name") return v.password_secret()->name;
    if (field == "spec.rabbitmq.urlSecretRef.name") return v.rabbitmq_url_secret()->name;
  } else {
    api::NatsServerView v(object);
    if (field == "spec.config.secretName") return v.config_secret_name();
    if (field == "spec.tls.caSecretRef.name") return v.ca_secret()->name;
  }
  return "";
}

}  // namespace

void CrossIndex::Reserve(size_t n) {
  owners_.reserve(n);
  nats_.reserve(n);
  by_prefix_.reserve(n);
  by_ancestor_.reserve(n);
  by_username_.reserve(n);
  claims_.reserve(2 * n);
}

void CrossIndex::AddBackend(const nlohmann::json& object) {
  api::BackendView v(object);
  size_t owner = owners_.size();
  owners_.push_back({api::kKindBackend, v.key()});
  for (auto& c : ClaimsOf(object, owner)) {
    claims_[SecretKey(v.ns(), ClaimedName(object, c.field))].push_back(std::move(c));
  }
  if (v.kind() != api::kBackendNats || !v.has_nats()) return;
  size_t idx = nats_.size();
  NatsEntry e{owner, v.server().ToString(), v.subject_prefix(), v.username()};
  by_prefix_[Join(e.server, e.prefix)].push_back(idx);
  for (const auto& a : Ancestors(e.prefix)) by_ancestor_[Join(e.server, a)].push_back(idx);
  if (!e.username.empty()) by_username_[Join(e.server, e.username)].push_back(idx);
  // During a rotation the current user is <username>-r<N> (status.username):
  // that name is taken on the server too.
  if (auto s = api::String(api::Path(object, {"status", "username"}))) {
    if (!s->empty() && *s != e.username)
      by_username_[Join(e.server, std::string(*s))].push_back(idx);
  }
  by_server_[e.server].push_back(idx);
  nats_.push_back(std::move(e));
}

void CrossIndex::AddServer(const nlohmann::json& object) {
  api::NatsServerView v(object);
  size_t owner = owners_.size();
  owners_.push_back({api::kKindServer, v.key()});
  servers_[v.key().ToString()] = &object;
  for (auto& c : ClaimsOf(object, owner)) {
    claims_[SecretKey(v.ns(), ClaimedName(object, c.field))].push_back(std::move(c));
  }
}

void CrossIndex::AddSecret(const nlohmann::json& object) {
  secrets_[SecretKey(api::NamespaceOf(object), api::NameOf(object))] = &object;
}

void CrossIndex::CheckClaims(const nlohmann::json& object, const api::ObjectKey& self,
                             Sink& sink) const {
  std::string ns = api::NamespaceOf(object);
  for (const auto& mine : ClaimsOf(object, kSelf)) {
    std::string name = ClaimedName(object, mine.field);
    auto it = claims_.find(SecretKey(ns, name));
    if (it == claims_.end()) continue;
    std::set<size_t> named;
    for (const auto& other : it->second) {
      if (owners_[other.owner].key == self || !(mine.writes || other.writes)) continue;
      if (!named.insert(other.owner).second || named.size() > kMaxNamed) continue;
      std::string fix = mine.field == "metadata.name"
                            ? "rename one of them, or give this backend a passwordSecretRef"
                            : "use a different Secret name";
      sink.Error("secret-collision", std::string(mine.field),
                 "Secret " + api::QualifiedName(ns, name) + " is " + std::string(mine.role) +
                     " of this object and also " + std::string(other.role) + " of " +
                     Describe(other.owner) +
                     "; Switchboard writes it, so they would overwrite each other: " + fix);
    }
  }
}

void CrossIndex::CheckBackend(const nlohmann::json& backend, Sink& sink) const {
  api::BackendView v(backend);
  api::ObjectKey self = v.key();
  CheckClaims(backend, self, sink);

  std::string backend_kind = v.kind();
  if (backend_kind == api::kBackendRabbitmq) {
    if (auto ref = v.rabbitmq_url_secret(); ref && !ref->name.empty() && !ref->key.empty()) {
      auto it = secrets_.find(SecretKey(v.ns(), ref->name));
      if (it != secrets_.end()) {
        auto value = SecretValue(*it->second, ref->key);
        if (!value) {
          sink.Error("rabbitmq-url", "spec.rabbitmq.urlSecretRef.key",
                     "Secret " + api::QualifiedName(v.ns(), ref->name) + " has no key " +
                         Quote(ref->key) + "; add it or fix the key");
        } else if (value->rfind("amqp://", 0) != 0 && value->rfind("amqps://", 0) != 0) {
          // The value is a credential: never echo it.
          sink.Error("rabbitmq-url", "spec.rabbitmq.urlSecretRef",
                     "the URL in Secret " + api::QualifiedName(v.ns(), ref->name) + " key " +
                         Quote(ref->key) + " is not amqp:// or amqps://; fix the Secret");
        }
      }
    }
  }
  if (backend_kind == api::kBackendNats) {
    if (auto pw = v.password_secret(); pw && !pw->name.empty() && !pw->key.empty()) {
      auto it = secrets_.find(SecretKey(v.ns(), pw->name));
      if (it != secrets_.end() && !SecretValue(*it->second, pw->key)) {
        sink.Error("secret-ref", "spec.nats.credentials.passwordSecretRef.key",
                   "Secret " + api::QualifiedName(v.ns(), pw->name) + " has no key " +
                       Quote(pw->key) + "; add it or fix the key");
      }
    }
  }
  if (backend_kind != api::kBackendNats || !v.has_nats()) return;

  api::ObjectKey server_key = v.server();
  if (server_key.name.empty()) return;
  std::string server = server_key.ToString();
  auto sit = servers_.find(server);
  if (sit == servers_.end()) {
    sink.Warn("server-not-found", "spec.nats.serverRef",
              "NatsServer " + server +
                  " does not exist (yet); the backend stays Ready=False (ServerNotFound) until it "
                  "is created: check the name and namespace");
  } else {
    api::NatsServerView sv(*sit->second);
    if (!sv.AllowsNamespace(v.ns())) {
      std::string from = sv.allowed_from();
      sink.Error("namespace-not-allowed", "spec.nats.serverRef",
                 "NatsServer " + server + " does not allow PubSubBackends from namespace " +
                     Quote(v.ns()) + " (its spec.allowedNamespaces.from is " + from +
                     "); add the namespace to the server's spec.allowedNamespaces (from: List, "
                     "names) or use a NatsServer that allows it");
    }
  }

  std::string prefix = v.subject_prefix();
  std::string username = v.username();
  auto others = [&](const std::vector<size_t>& idxs) {
    std::vector<size_t> out;
    for (size_t i : idxs) {
      if (owners_[nats_[i].owner].key != self) out.push_back(i);
    }
    return out;
  };
  auto names = [&](const std::vector<size_t>& idxs) {
    std::string out;
    for (size_t k = 0; k < idxs.size() && k < kMaxNamed; ++k) {
      if (k) out += ", ";
      out += Describe(nats_[idxs[k]].owner);
    }
    if (idxs.size() > kMaxNamed) out += " and " + std::to_string(idxs.size() - kMaxNamed) + " more";
    return out;
  };

  if (auto it = by_prefix_.find(Join(server, prefix)); it != by_prefix_.end()) {
    if (auto o = others(it->second); !o.empty()) {
      sink.Error("unique-prefix", "spec.nats.subjectPrefix",
                 Quote(prefix) + " is already used on NatsServer " + server + " by " + names(o) +
                     "; two installations on one prefix read each other's messages: choose a "
                     "different prefix (e.g. hatchet." +
                     v.ns() + ")");
    }
  }
  std::vector<size_t> nested;
  for (const auto& a : Ancestors(prefix)) {
    if (auto it = by_prefix_.find(Join(server, a)); it != by_prefix_.end()) {
      for (size_t i : others(it->second)) nested.push_back(i);
    }
  }
  if (auto it = by_ancestor_.find(Join(server, prefix)); it != by_ancestor_.end()) {
    for (size_t i : others(it->second)) nested.push_back(i);
  }
  if (!nested.empty()) {
    sink.Warn("nested-prefix", "spec.nats.subjectPrefix",
              Quote(prefix) + " is nested with the prefix of " + names(nested) + " on NatsServer " +
                  server +
                  "; permissions (<prefix>.*) still isolate them, but subject monitoring and any "
                  "wider permission would mix them: prefer sibling prefixes");
  }
  if (auto it = username.empty() ? by_username_.end() : by_username_.find(Join(server, username));
      it != by_username_.end()) {
    if (auto o = others(it->second); !o.empty()) {
      sink.Error("unique-username", "spec.nats.credentials.username",
                 Quote(username) + " is already a user on NatsServer " + server + " (of " +
                     names(o) +
                     "); NATS allows one password per user name: choose another username (the "
                     "default is <namespace>-<name>)");
    }
  }
}

void CrossIndex::CheckServer(const nlohmann::json& server, Sink& sink) const {
  api::NatsServerView v(server);
  api::ObjectKey self = v.key();
  CheckClaims(server, self, sink);
  auto it = by_server_.find(self.ToString());
  if (it == by_server_.end()) return;
  std::vector<std::string> excluded;
  for (size_t i : it->second) {
    const auto& key = owners_[nats_[i].owner].key;
    if (!v.AllowsNamespace(key.ns)) excluded.push_back("PubSubBackend " + key.ToString());
  }
  if (excluded.empty()) return;
  std::string list;
  for (size_t k = 0; k < excluded.size() && k < kMaxNamed; ++k)
    list += (k ? ", " : "") + excluded[k];
  if (excluded.size() > kMaxNamed)
    list += " and " + std::to_string(excluded.size() - kMaxNamed) + " more";
  sink.Warn("namespace-not-allowed", "spec.allowedNamespaces",
            "does not allow " + list +
                ", bound to this server by spec.nats.serverRef; they get no access (Ready=False, "
                "NamespaceNotAllowed): allow their namespaces or move them to another server");
}

}  // namespace switchboard::rules::internal
