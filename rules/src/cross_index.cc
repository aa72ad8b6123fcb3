#include "cross_index.h"

#include <cstdint>
#include <set>
#include <tuple>
#include <utility>

#include "rules.h"
#include "switchboard/api/constants.h"
#include "switchboard/api/json_fields.h"
#include "switchboard/api/names.h"
#include "switchboard/api/quantity.h"
#include "switchboard/api/usage.h"
#include "switchboard/api/values.h"
#include "switchboard/common/base64.h"

namespace switchboard::rules::internal {
namespace {

constexpr size_t kMaxNamed = 3;  // other objects named in one message

// Proper ancestors of a dotted prefix: "a.b.c" -> "a", "a.b".
std::vector<std::string_view> Ancestors(std::string_view prefix) {
  std::vector<std::string_view> out;
  for (size_t i = prefix.find('.'); i != std::string_view::npos; i = prefix.find('.', i + 1)) {
    if (i > 0) out.push_back(prefix.substr(0, i));
  }
  return out;
}

// Secret data as the API server stores it; undecodable values read as empty
// (the rules then report the Secret's content as missing).
// The value of `key` in a Secret object, when present (data is base64).
std::optional<std::string> SecretValue(const nlohmann::json& secret, const std::string& key) {
  if (auto s = api::String(api::Path(secret, {"stringData", key}))) return std::string(*s);
  if (auto s = api::String(api::Path(secret, {"data", key}))) {
    return base64::Decode(*s).value_or("");
  }
  return std::nullopt;
}

// What a claimed Secret is to its object, the field naming it, and whether
// Switchboard writes it (two readers of one Secret do not collide).
struct ClaimText {
  std::string_view role;
  std::string_view field;
  bool writes;
};

ClaimText TextOf(CrossIndex::ClaimKind kind) {
  using K = CrossIndex::ClaimKind;
  switch (kind) {
    case K::kEnv:
      return {"the env Secret", "spec.output.secretName", true};
    case K::kPassword:
      return {"the password Secret", "spec.nats.credentials.passwordSecretRef.name", false};
    case K::kGeneratedCredentials:
      return {"the generated credentials Secret", "metadata.name", true};
    case K::kRabbitmqUrl:
      return {"the RabbitMQ URL Secret", "spec.rabbitmq.urlSecretRef.name", false};
    case K::kConfig:
      return {"the config Secret", "spec.config.secretName", true};
    case K::kCallout:
      return {"the callout keys Secret", "spec.provisioning.authCallout.secretName", true};
    case K::kUsageSystem:
      return {"the usage system user's Secret", "spec.usage.systemUser", true};
    case K::kCa:
      return {"the CA Secret", "spec.tls.caSecretRef.name", false};
  }
  return {"", "", false};
}

}  // namespace

CrossIndex::Facts CrossIndex::FactsOf(const nlohmann::json& object) {
  Facts f;
  std::string kind = api::KindOf(object);
  if (kind == api::kKindBackend) {
    api::BackendView v(object);
    f.kind = api::kKindBackend;
    f.key = v.key();
    f.backend_kind = v.kind();
    f.password = v.password_secret();
    f.rabbitmq_url = v.rabbitmq_url_secret();
    if (!f.key.name.empty()) {
      f.claims.push_back({ClaimKind::kEnv, v.env_secret_name()});
      if (f.backend_kind == api::kBackendNats) {
        if (f.password && !f.password->name.empty()) {
          f.claims.push_back({ClaimKind::kPassword, f.password->name});
        } else {
          f.claims.push_back(
              {ClaimKind::kGeneratedCredentials, api::DefaultCredentialsSecretName(f.key.name)});
        }
      } else if (f.backend_kind == api::kBackendRabbitmq && f.rabbitmq_url &&
                 !f.rabbitmq_url->name.empty()) {
        f.claims.push_back({ClaimKind::kRabbitmqUrl, f.rabbitmq_url->name});
      }
    }
    f.nats = f.backend_kind == api::kBackendNats && v.has_nats();
    if (f.nats) {
      api::ObjectKey server = v.server();
      f.server_named = !server.name.empty();
      f.server = server.ToString();
      f.prefix = v.subject_prefix();
      f.username = v.username();
      if (auto s = api::String(api::Path(object, {"status", "username"}))) {
        f.status_username = std::string(*s);
      }
      f.created = api::CreationTimeOf(object);
      // Only values that pass their own checks (reported by CheckLimitsBlock)
      // are judged against the server.
      f.limits = v.limits();
      auto& l = f.limits;
      if (l.max_connections && !api::CheckMaxConnections(*l.max_connections).empty()) {
        l.max_connections.reset();
      }
      if (l.max_subscriptions && !api::CheckMaxSubscriptions(*l.max_subscriptions).empty()) {
        l.max_subscriptions.reset();
      }
      if (l.max_payload && !api::CheckMaxPayload(*l.max_payload).empty()) l.max_payload.reset();
      f.limits_set = LimitsSet(api::Path(object, {"spec", "nats", "limits"}));
    }
  } else if (kind == api::kKindServer) {
    api::NatsServerView v(object);
    f.kind = api::kKindServer;
    f.key = v.key();
    f.object = &object;
    if (!f.key.name.empty()) {
      f.claims.push_back({ClaimKind::kConfig, v.config_secret_name()});
      if (v.auth_callout()) f.claims.push_back({ClaimKind::kCallout, v.callout_secret_name()});
      if (api::WritesUsageSystemSecret(v)) {
        f.claims.push_back({ClaimKind::kUsageSystem, api::UsageSystemSecretName(f.key.name)});
      }
      if (auto ca = v.ca_secret(); ca && !ca->name.empty()) {
        f.claims.push_back({ClaimKind::kCa, ca->name});
      }
    }
  }
  return f;
}

const CrossIndex::Facts CrossIndex::kNoFacts{};

std::string CrossIndex::Describe(size_t id) const {
  const Facts& f = FactsAt(id);
  return std::string(f.kind) + " " + f.key.ToString();
}

api::ClaimAge CrossIndex::AgeOf(const Facts& f, bool prefix) {
  bool now = prefix ? f.prefix_claimed_now : f.username_claimed_now;
  return api::ClaimAge{now ? std::nullopt : f.created, f.key};
}

size_t CrossIndex::Winner(const Facts& facts, const std::vector<size_t>& ids, bool prefix) const {
  auto age = [prefix](const Facts& f) { return AgeOf(f, prefix); };
  size_t winner = SIZE_MAX;
  api::ClaimAge best = age(facts);
  for (size_t id : ids) {
    api::ClaimAge theirs = age(FactsAt(id));
    if (api::KeepsClaim(theirs, best)) {
      best = theirs;
      winner = id;
    }
  }
  return winner;
}

uint64_t CrossIndex::Hash(std::string_view a, std::string_view b) {
  uint64_t ha = std::hash<std::string_view>()(a), hb = std::hash<std::string_view>()(b);
  return ha ^ (hb + 0x9e3779b97f4a7c15ULL + (ha << 6) + (ha >> 2));
}

void CrossIndex::Multimap::Seal() {
  auto mid = std::is_sorted_until(entries_.begin(), entries_.end());
  if (mid == entries_.end()) return;
  std::sort(mid, entries_.end());
  std::inplace_merge(entries_.begin(), mid, entries_.end());
}

void CrossIndex::Reserve(size_t n) {
  by_prefix_.Reserve(n);
  by_username_.Reserve(n);
  by_server_.Reserve(n);
  claims_.Reserve(2 * n);
}

void CrossIndex::Seal() {
  for (Multimap* m : {&by_prefix_, &by_ancestor_, &by_username_, &by_server_, &claims_}) {
    if (unsealed_removals_) {
      m->RemoveIf([this](uint32_t id) { return facts_[id] == nullptr; });
    }
    m->Seal();
  }
  unsealed_removals_ = false;
}

size_t CrossIndex::Add(Facts facts) { return Add(std::make_shared<const Facts>(std::move(facts))); }

void CrossIndex::Remove(size_t id) {
  if (id >= facts_.size() || !facts_[id]) return;
  const Facts& f = *facts_[id];
  // Its multimap entries go in the next Seal, all removals in one pass.
  unsealed_removals_ = true;
  if (f.kind == api::kKindServer) {
    auto it = servers_.find(f.key.ToString());
    if (it != servers_.end() && it->second == f.object) servers_.erase(it);
  }
  facts_[id] = nullptr;
  ++removed_;
}

size_t CrossIndex::Add(FactsPtr facts) {
  size_t id = facts_.size();
  const Facts& f = *facts_.emplace_back(std::move(facts));
  if (f.kind.empty()) return id;
  for (size_t c = 0; c < f.claims.size(); ++c) {
    claims_.Add(Hash(f.key.ns, f.claims[c].secret), id, static_cast<uint32_t>(c));
  }
  if (f.kind == api::kKindServer) {
    servers_[f.key.ToString()] = f.object;
    return id;
  }
  if (!f.nats) return id;
  by_prefix_.Add(Hash(f.server, f.prefix), id);
  for (auto a : Ancestors(f.prefix)) {
    by_ancestor_.Add(Hash(f.server, a), id, static_cast<uint32_t>(a.size()));
  }
  if (!f.username.empty()) by_username_.Add(Hash(f.server, f.username), id);
  // During a rotation the current user is <username>-r<N> (status.username):
  // that name is taken on the server too.
  if (!f.status_username.empty() && f.status_username != f.username) {
    by_username_.Add(Hash(f.server, f.status_username), id, 1);
  }
  by_server_.Add(Hash(f.server), id);
  return id;
}

void CrossIndex::AddSecret(const nlohmann::json& object) {
  secrets_[SecretKey(api::NamespaceOf(object), api::NameOf(object))] = &object;
}

void CrossIndex::Check(const Facts& facts, Sink& sink) const {
  if (facts.kind == api::kKindBackend) CheckBackend(facts, sink);
  if (facts.kind == api::kKindServer) CheckServer(facts, sink);
}

void CrossIndex::CheckClaims(const Facts& facts, Sink& sink) const {
  const std::string& ns = facts.key.ns;
  for (const auto& mine : facts.claims) {
    ClaimText my = TextOf(mine.kind);
    // Who else claims it, named in key order: the same names whatever order
    // the objects were indexed in (rules::ContextCache appends a changed one).
    std::vector<std::pair<size_t, uint32_t>> others;
    claims_.ForEach(Hash(ns, mine.secret), [&](size_t id, uint32_t claim) {
      const Facts& owner = FactsAt(id);
      const Claim& theirs = owner.claims[claim];
      if (owner.key.ns != ns || theirs.secret != mine.secret) return;  // a hash collision
      if (owner.key == facts.key || !(my.writes || TextOf(theirs.kind).writes)) return;
      others.emplace_back(id, claim);
    });
    std::sort(others.begin(), others.end(), [this](const auto& a, const auto& b) {
      return std::tie(FactsAt(a.first).key, a.second) < std::tie(FactsAt(b.first).key, b.second);
    });
    std::set<size_t> named;
    for (const auto& [id, claim] : others) {
      if (!named.insert(id).second || named.size() > kMaxNamed) continue;
      ClaimText other = TextOf(FactsAt(id).claims[claim].kind);
      std::string fix = my.field == "metadata.name"
                            ? "rename one of them, or give this backend a passwordSecretRef"
                            : "use a different Secret name";
      sink.Error("secret-collision", std::string(my.field),
                 "Secret " + api::QualifiedName(ns, mine.secret) + " is " + std::string(my.role) +
                     " of this object and also " + std::string(other.role) + " of " + Describe(id) +
                     "; Switchboard writes it, so they would overwrite each other: " + fix);
    }
  }
}

void CrossIndex::CheckBackend(const Facts& facts, Sink& sink) const {
  CheckClaims(facts, sink);
  const std::string& ns = facts.key.ns;
  const std::string& backend_kind = facts.backend_kind;
  if (backend_kind == api::kBackendRabbitmq) {
    if (const auto& ref = facts.rabbitmq_url; ref && !ref->name.empty() && !ref->key.empty()) {
      auto it = secrets_.find(SecretKey(ns, ref->name));
      if (it != secrets_.end()) {
        auto value = SecretValue(*it->second, ref->key);
        if (!value) {
          sink.Error("rabbitmq-url", "spec.rabbitmq.urlSecretRef.key",
                     "Secret " + api::QualifiedName(ns, ref->name) + " has no key " +
                         Quote(ref->key) + "; add it or fix the key");
        } else if (value->rfind("amqp://", 0) != 0 && value->rfind("amqps://", 0) != 0) {
          // The value is a credential: never echo it.
          sink.Error("rabbitmq-url", "spec.rabbitmq.urlSecretRef",
                     "the URL in Secret " + api::QualifiedName(ns, ref->name) + " key " +
                         Quote(ref->key) + " is not amqp:// or amqps://; fix the Secret");
        }
      }
    }
  }
  if (backend_kind == api::kBackendNats) {
    if (const auto& pw = facts.password; pw && !pw->name.empty() && !pw->key.empty()) {
      auto it = secrets_.find(SecretKey(ns, pw->name));
      if (it != secrets_.end() && !SecretValue(*it->second, pw->key)) {
        sink.Error("secret-ref", "spec.nats.credentials.passwordSecretRef.key",
                   "Secret " + api::QualifiedName(ns, pw->name) + " has no key " + Quote(pw->key) +
                       "; add it or fix the key");
      }
    }
  }
  if (!facts.nats || !facts.server_named) return;
  const std::string& server = facts.server;
  auto sit = servers_.find(server);
  if (sit == servers_.end()) {
    sink.Warn("server-not-found", "spec.nats.serverRef",
              "NatsServer " + server +
                  " does not exist (yet); the backend stays Ready=False (ServerNotFound) until it "
                  "is created: check the name and namespace");
  } else {
    api::NatsServerView sv(*sit->second);
    if (!sv.AllowsNamespace(ns)) {
      std::string from = sv.allowed_from();
      sink.Error("namespace-not-allowed", "spec.nats.serverRef",
                 "NatsServer " + server + " does not allow PubSubBackends from namespace " +
                     Quote(ns) + " (its spec.allowedNamespaces.from is " + from +
                     "); add the namespace to the server's spec.allowedNamespaces (from: List, "
                     "names) or use a NatsServer that allows it");
    }
    if (facts.limits_set) CheckLimits(facts, sv, sink);
  }

  const std::string& prefix = facts.prefix;
  const std::string& username = facts.username;
  using Ids = std::vector<size_t>;
  // The other objects (not this one) with `prefix` (whole, or the first
  // `length` characters of theirs when length > 0) on this server.
  auto with_prefix = [&](const Multimap& map, std::string_view key, bool ancestor, Ids& out) {
    map.ForEach(Hash(server, key), [&](size_t id, uint32_t length) {
      const Facts& f = FactsAt(id);
      std::string_view theirs = f.prefix;
      if (ancestor) theirs = theirs.substr(0, length);
      if (f.server == server && theirs == key && f.key != facts.key) out.push_back(id);
    });
  };
  // Named in key order (see CheckClaims).
  auto names = [&](Ids ids) {
    std::sort(ids.begin(), ids.end(),
              [this](size_t a, size_t b) { return FactsAt(a).key < FactsAt(b).key; });
    std::string out;
    for (size_t k = 0; k < ids.size() && k < kMaxNamed; ++k) {
      if (k) out += ", ";
      out += Describe(ids[k]);
    }
    if (ids.size() > kMaxNamed) out += " and " + std::to_string(ids.size() - kMaxNamed) + " more";
    return out;
  };

  // Of two backends that claim one prefix or user name, only the one that
  // does not keep it (api/claims.h: the newer) is refused, naming the one
  // that does.
  auto kept_by = [&](size_t winner, size_t others, bool prefix_claim) {
    api::ClaimAge mine = AgeOf(facts, prefix_claim), theirs = AgeOf(FactsAt(winner), prefix_claim);
    std::string why = !theirs.created
                          ? "neither is created yet: the smaller namespace/name keeps it"
                      : !mine.created ? "it already holds it and keeps it"
                      : *theirs.created == *mine.created
                          ? "created in the same second: the smaller namespace/name keeps it"
                          : "created earlier, it keeps it";
    std::string more = others > 1 ? " (and " + std::to_string(others - 1) + " more claim it)" : "";
    return Describe(winner) + " (" + why + ")" + more;
  };
  Ids same;
  with_prefix(by_prefix_, prefix, false, same);
  if (size_t winner = Winner(facts, same, true); winner != SIZE_MAX) {
    sink.Error("unique-prefix", "spec.nats.subjectPrefix",
               Quote(prefix) + " is already used on NatsServer " + server + " by " +
                   kept_by(winner, same.size(), true) +
                   "; two installations on one prefix read each other's messages: choose a "
                   "different prefix (e.g. hatchet." +
                   ns + ")");
  }
  Ids nested;
  for (auto a : Ancestors(prefix)) with_prefix(by_prefix_, a, false, nested);
  if (!prefix.empty()) with_prefix(by_ancestor_, prefix, true, nested);
  if (!nested.empty()) {
    sink.Warn("nested-prefix", "spec.nats.subjectPrefix",
              Quote(prefix) + " is nested with the prefix of " + names(nested) + " on NatsServer " +
                  server +
                  "; permissions (<prefix>.*) still isolate them, but subject monitoring and any "
                  "wider permission would mix them: prefer sibling prefixes");
  }
  Ids users;
  if (!username.empty()) {
    by_username_.ForEach(Hash(server, username), [&](size_t id, uint32_t status) {
      const Facts& f = FactsAt(id);
      const std::string& theirs = status ? f.status_username : f.username;
      if (f.server == server && theirs == username && f.key != facts.key) users.push_back(id);
    });
  }
  if (size_t winner = Winner(facts, users, false); winner != SIZE_MAX) {
    sink.Error("unique-username", "spec.nats.credentials.username",
               Quote(username) + " is already a user on NatsServer " + server + ", of " +
                   kept_by(winner, users.size(), false) +
                   "; NATS allows one password per user name: choose another username (the "
                   "default is <namespace>-<name>)");
  }
}

void CrossIndex::CheckLimits(const Facts& facts, const api::NatsServerView& server, Sink& sink) {
  const std::string key = server.key().ToString();
  if (server.isolation() != api::kIsolationAccounts) {
    sink.Error("installation-limits", "spec.nats.limits",
               "NatsServer " + key + " has isolation: " + server.isolation() +
                   (server.auth_callout() ? " and provisioning.mode: AuthCallout" : "") + "; " +
                   api::LimitsNeedAccounts(server.auth_callout()));
    return;
  }
  const api::InstallationLimits defaults = server.installation_limits();
  const bool raise = server.limits_raise_allowed();
  auto over = [&](std::string_view field, const std::optional<int64_t>& value,
                  const std::optional<int64_t>& def) {
    if (!value) return;
    if (std::string err = api::CheckLimitOverride(field, *value, def, raise, key); !err.empty()) {
      sink.Error("installation-limits", "spec.nats.limits." + std::string(field), std::move(err));
    }
  };
  over("maxConnections", facts.limits.max_connections, defaults.max_connections);
  over("maxSubscriptions", facts.limits.max_subscriptions, defaults.max_subscriptions);
  over("maxPayload", facts.limits.max_payload, defaults.max_payload);
  // Above the server's own max_payload it changes nothing: a client gets
  // the smaller. Admitted (lowering the server later must not refuse the
  // backend), and said.
  auto server_payload = server.max_payload();
  if (facts.limits.max_payload && server_payload && *facts.limits.max_payload > *server_payload) {
    sink.Warn("installation-limits", "spec.nats.limits.maxPayload",
              "is " + api::FormatBytes(*facts.limits.max_payload) + ", above NatsServer " + key +
                  "'s spec.maxPayload (" + api::FormatBytes(*server_payload) +
                  "): a client gets the smaller, " + api::FormatBytes(*server_payload) +
                  " (status.limits.maxPayload shows it); lower it or remove it");
  }
}

void CrossIndex::CheckServer(const Facts& facts, Sink& sink) const {
  CheckClaims(facts, sink);
  api::NatsServerView v(*facts.object);
  std::string self = facts.key.ToString();
  std::vector<std::string> excluded, limited;
  const bool accounts = v.isolation() == api::kIsolationAccounts;
  by_server_.ForEach(Hash(self), [&](size_t id, uint32_t) {
    const Facts& f = FactsAt(id);
    if (f.server != self) return;
    if (!v.AllowsNamespace(f.key.ns)) {
      excluded.push_back("PubSubBackend " + f.key.ToString());
    } else if (!accounts && f.limits_set) {
      limited.push_back("PubSubBackend " + f.key.ToString());
    }
  });
  auto list_of = [](std::vector<std::string>& names) {
    std::sort(names.begin(), names.end());
    std::string list;
    for (size_t k = 0; k < names.size() && k < kMaxNamed; ++k) list += (k ? ", " : "") + names[k];
    if (names.size() > kMaxNamed)
      list += " and " + std::to_string(names.size() - kMaxNamed) + " more";
    return list;
  };
  if (!limited.empty()) {
    sink.Warn("installation-limits", "spec.isolation",
              list_of(limited) + " set spec.nats.limits, which need isolation: Accounts; with " +
                  v.isolation() +
                  " they are refused (Ready=False, InvalidSpec) and their engines keep "
                  "connecting without limits: set isolation: Accounts, or remove their limits");
  }
  if (excluded.empty()) return;
  const std::string list = list_of(excluded);
  sink.Warn("namespace-not-allowed", "spec.allowedNamespaces",
            "does not allow " + list +
                ", bound to this server by spec.nats.serverRef; they get no access (Ready=False, "
                "NamespaceNotAllowed): allow their namespaces or move them to another server");
}

}  // namespace switchboard::rules::internal
