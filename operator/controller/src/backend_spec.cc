#include "backend_spec.h"

#include "desired.h"

namespace switchboard::controller {
namespace {
std::string Str(const json& o, const char* k) {
  auto it = o.find(k);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}
int64_t Int(const json& o, const char* k, int64_t def) {
  auto it = o.find(k);
  return it != o.end() && it->is_number_integer() ? it->get<int64_t>() : def;
}
const json& Obj(const json& o, const char* k) {
  static const json kEmpty = json::object();
  auto it = o.find(k);
  return it != o.end() && it->is_object() ? *it : kEmpty;
}
}  // namespace

BackendSpec ReadBackendSpec(const json& b) {
  BackendSpec s;
  const json& meta = Obj(b, "metadata");
  s.ns = Str(meta, "namespace");
  s.name = Str(meta, "name");
  s.uid = Str(meta, "uid");
  const json& spec = Obj(b, "spec");
  s.kind = Str(spec, "kind");
  const json& nats = Obj(spec, "nats");
  const json& ref = Obj(nats, "serverRef");
  s.server_name = Str(ref, "name");
  s.server_ns = Str(ref, "namespace");
  if (s.server_ns.empty()) s.server_ns = s.ns;
  if (auto p = Str(nats, "subjectPrefix"); !p.empty()) s.prefix = p;
  const json& creds = Obj(nats, "credentials");
  s.username = Str(creds, "username");
  if (s.username.empty()) s.username = s.ns + "-" + s.name;
  const json& pw = Obj(creds, "passwordSecretRef");
  s.password_secret = Str(pw, "name");
  if (auto k = Str(pw, "key"); !k.empty()) s.password_key = k;
  if (auto g = Str(creds, "rotationGracePeriod"); !g.empty()) s.grace = g;
  const json& rmq = Obj(spec, "rabbitmq");
  const json& url = Obj(rmq, "urlSecretRef");
  s.url_secret = Str(url, "name");
  if (auto k = Str(url, "key"); !k.empty()) s.url_key = k;
  s.max_pub = Int(rmq, "maxPubChans", 10);
  s.max_sub = Int(rmq, "maxSubChans", 20);
  const json& pg = Obj(spec, "postgres");
  s.max_conns = Int(pg, "maxConns", 5);
  s.min_conns = Int(pg, "minConns", 1);
  s.env_secret = Str(Obj(spec, "output"), "secretName");
  if (s.env_secret.empty()) s.env_secret = s.name + "-pubsub-env";
  return s;
}

ServerSpec ReadServerSpec(const json& srv) {
  ServerSpec s;
  const json& meta = Obj(srv, "metadata");
  s.ns = Str(meta, "namespace");
  s.name = Str(meta, "name");
  s.uid = Str(meta, "uid");
  const json& spec = Obj(srv, "spec");
  s.url = Str(spec, "url");
  s.isolation = Str(spec, "isolation");
  if (spec.contains("maxPayload")) s.max_payload = ParseQuantity(spec["maxPayload"]);
  if (spec.contains("maxPending")) s.max_pending = ParseQuantity(spec["maxPending"]);
  const json& cfg = Obj(spec, "config");
  s.config_secret = Str(cfg, "secretName");
  if (s.config_secret.empty()) s.config_secret = s.name + "-switchboard";
  if (auto k = Str(cfg, "key"); !k.empty()) s.config_key = k;
  const json& ca = Obj(Obj(spec, "tls"), "caSecretRef");
  s.ca_secret = Str(ca, "name");
  if (auto k = Str(ca, "key"); !k.empty()) s.ca_key = k;
  const json& allowed = Obj(spec, "allowedNamespaces");
  if (auto f = Str(allowed, "from"); !f.empty()) s.allowed_from = f;
  if (auto n = allowed.find("names"); n != allowed.end() && n->is_array()) {
    for (const auto& x : *n) {
      if (x.is_string()) s.allowed_names.push_back(x.get<std::string>());
    }
  }
  return s;
}

bool ServerSpec::Allows(const std::string& backend_ns) const {
  if (allowed_from == "All") return true;
  if (allowed_from == "List") {
    for (const auto& n : allowed_names) {
      if (n == backend_ns) return true;
    }
    return false;
  }
  return backend_ns == ns;
}

std::string ServerKeyOf(const json& backend) {
  const json& spec = Obj(backend, "spec");
  if (Str(spec, "kind") != "nats") return "";
  const json& ref = Obj(Obj(spec, "nats"), "serverRef");
  std::string name = Str(ref, "name");
  if (name.empty()) return "";
  std::string ns = Str(ref, "namespace");
  if (ns.empty()) ns = Str(Obj(backend, "metadata"), "namespace");
  return ns + "/" + name;
}

}  // namespace switchboard::controller
