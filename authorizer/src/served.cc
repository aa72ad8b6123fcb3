#include "switchboard/authorizer/served.h"

#include <algorithm>
#include <list>

#include "switchboard/api/constants.h"
#include "switchboard/api/views.h"
#include "switchboard/kube/packed_object.h"
#include "switchboard/operator_logic/objects.h"

namespace switchboard::authorizer {

namespace logic = operator_logic;
using nlohmann::json;

bool ServedServer::SameConnections(const ServedServer& other) const {
  auto user = [](const ServedServer& s) {
    return s.operator_mode ? s.operator_mode->keys.authorizer_user.public_key() : std::string();
  };
  return urls == other.urls && authorizer == other.authorizer && system == other.system &&
         ca == other.ca && user(*this) == user(other);
}

namespace {

Result<ServedServer> Build(const json& server, const logic::BackendSource& backends,
                           const logic::SecretLookup& secret) {
  api::NatsServerView view(server);
  ServedServer out;
  out.ns = view.ns();
  out.name = view.name();
  if (!view.auth_callout()) {
    return Status::FailedPrecondition("NatsServer " + out.key() + " is not in " +
                                      std::string(api::kProvisioningAuthCallout) + " mode");
  }
  out.urls = view.url();
  out.account = view.callout_account();
  const std::string secret_name = view.callout_secret_name();
  const json* stored = secret(out.ns, secret_name);
  if (stored == nullptr) {
    return Status::FailedPrecondition("callout Secret " + out.ns + "/" + secret_name +
                                      " not found (the operator writes it)");
  }
  auto data = logic::DecodeSecretData(*stored);
  if (!data.ok()) {
    return Status::FailedPrecondition("callout Secret " + out.ns + "/" + secret_name + ": " +
                                      data.status().message());
  }
  auto keys = logic::DecodeCalloutKeys(*data);
  if (!keys.ok()) {
    return Status::FailedPrecondition("callout Secret " + out.ns + "/" + secret_name + ": " +
                                      keys.status().message());
  }
  auto issuer = natsauth::KeyPair::FromSeed(keys->issuer_seed);
  if (!issuer.ok()) {
    return Status::FailedPrecondition("callout Secret " + out.ns + "/" + secret_name +
                                      ": the issuer seed does not decode");
  }
  out.issuer = std::make_shared<const natsauth::KeyPair>(std::move(issuer).value());
  out.authorizer = keys->authorizer;
  out.system = keys->system;
  out.ca = keys->ca;
  auto mode = OperatorModeOf(server, *data, keys->issuer_seed);
  if (!mode.ok()) {
    return Status::FailedPrecondition("callout Secret " + out.ns + "/" + secret_name + ": " +
                                      mode.status().message());
  }
  out.operator_mode = std::move(mode).value();
  auto directory = logic::CollectDirectory(server, backends, secret);
  if (!directory.ok()) return directory.status();
  out.directory = std::make_shared<const logic::Directory>(std::move(directory).value());
  return out;
}

}  // namespace

Result<ServedServer> BuildServedServer(const json& server, const std::vector<const json*>& backends,
                                       const logic::SecretLookup& secret) {
  return Build(server, logic::BackendsOf(backends), secret);
}

Result<ServedServer> BuildServedServerFromCache(const json& server,
                                                const std::vector<kube::ObjectPtr>& backends,
                                                const CachedSecret& secret) {
  // What the lookup unpacked: while a backend is visited, for that visit
  // only (BackendSource's contract); outside one (the callout Secret), for
  // the whole build. std::list: the pointers handed out stay valid.
  std::list<json> held, visit_held;
  bool visiting = false;
  auto lookup = [&](std::string_view ns, std::string_view name) -> const json* {
    kube::ObjectPtr s = secret(ns, name);
    if (!s) return nullptr;
    std::list<json>& into = visiting ? visit_held : held;
    into.push_back(kube::UnpackObject(*s));
    return &into.back();
  };
  auto source = [&](const logic::BackendVisitor& visit) {
    for (const kube::ObjectPtr& b : backends) {
      if (!b) continue;
      visiting = true;
      if (kube::IsPackedObject(*b)) {
        visit(kube::UnpackObject(*b));
      } else {
        visit(*b);
      }
      visiting = false;
      visit_held.clear();
    }
  };
  return Build(server, source, lookup);
}

bool Selected(const json& server, const std::vector<std::string>& only) {
  api::NatsServerView view(server);
  if (!view.auth_callout()) return false;
  if (only.empty()) return true;
  const std::string key = view.ns() + "/" + view.name();
  return std::find(only.begin(), only.end(), key) != only.end();
}

bool NarrowsAccess(const logic::Directory& before, const logic::Directory& after) {
  if (before.account != after.account) return true;
  for (const auto& [user, was] : before.by_user) {
    auto it = after.by_user.find(user);
    if (it == after.by_user.end()) return true;
    for (const auto& p : was.passwords) {
      auto same = std::find_if(
          it->second.passwords.begin(), it->second.passwords.end(),
          [&](const logic::AcceptedPassword& q) { return q.generation == p.generation; });
      if (same == it->second.passwords.end()) return true;
      if (same->until && (!p.until || *same->until < *p.until)) return true;
    }
  }
  return false;
}

std::optional<logic::Time> NextRetirement(const logic::Directory& directory, logic::Time now) {
  std::optional<logic::Time> next;
  for (const auto& [user, entry] : directory.by_user) {
    for (const auto& p : entry.passwords) {
      if (p.until && *p.until > now && (!next || *p.until < *next)) next = p.until;
    }
  }
  return next;
}

}  // namespace switchboard::authorizer
