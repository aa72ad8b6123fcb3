#include "switchboard/authorizer/served.h"

#include <algorithm>

#include "switchboard/api/constants.h"
#include "switchboard/api/operator_mode.h"
#include "switchboard/api/views.h"
#include "switchboard/operator_logic/objects.h"

namespace switchboard::authorizer {

namespace logic = operator_logic;
using nlohmann::json;

bool ServedServer::SameConnections(const ServedServer& other) const {
  auto user = [](const std::shared_ptr<const OperatorMode>& mode) {
    return mode ? mode->keys.authorizer_user.public_key() : std::string();
  };
  return urls == other.urls && authorizer == other.authorizer && system == other.system &&
         ca == other.ca && user(operator_mode) == user(other.operator_mode) &&
         user(operator_mode_keys) == user(other.operator_mode_keys);
}

std::vector<std::shared_ptr<const OperatorMode>> LoginsOf(const ServedServer& served) {
  if (served.operator_mode) return {served.operator_mode, nullptr};
  if (served.operator_mode_keys) return {nullptr, served.operator_mode_keys};
  return {nullptr};
}

CalloutSecret CalloutSecretOf(const json& secret) {
  CalloutSecret out;
  auto data = logic::DecodeSecretData(secret);
  if (!data.ok()) {
    out.problem = data.status().message();
    return out;
  }
  auto keys = logic::DecodeCalloutKeys(*data);
  if (!keys.ok()) {
    out.problem = keys.status().message();
    return out;
  }
  out.keys = std::move(keys).value();
  auto seeds = logic::DecodeOperatorModeSeeds(*data);
  if (!seeds.ok()) {
    out.operator_mode_problem = seeds.status().message();
    return out;
  }
  auto mode = OperatorModeOf(*seeds, out.keys->issuer_seed);
  if (!mode.ok()) {
    out.operator_mode_problem = mode.status().message();
    return out;
  }
  out.operator_mode_seeds = std::move(seeds).value();
  out.operator_mode = std::move(mode).value();
  return out;
}

namespace {

Result<ServedServer> Build(const json& server, const CalloutLookup& callout,
                           const std::function<Result<logic::Directory>()>& directory) {
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
  std::shared_ptr<const CalloutSecret> stored = callout(out.ns, secret_name);
  if (stored == nullptr) {
    return Status::FailedPrecondition("callout Secret " + out.ns + "/" + secret_name +
                                      " not found (the operator writes it)");
  }
  if (!stored->keys) {
    return Status::FailedPrecondition("callout Secret " + out.ns + "/" + secret_name + ": " +
                                      stored->problem);
  }
  const logic::CalloutKeys& keys = *stored->keys;
  auto issuer = natsauth::KeyPair::FromSeed(keys.issuer_seed);
  if (!issuer.ok()) {
    return Status::FailedPrecondition("callout Secret " + out.ns + "/" + secret_name +
                                      ": the issuer seed does not decode");
  }
  out.issuer = std::make_shared<const natsauth::KeyPair>(std::move(issuer).value());
  out.authorizer = keys.authorizer;
  out.system = keys.system;
  out.ca = keys.ca;
  if (api::OperatorMode(view)) {
    if (stored->operator_mode == nullptr) {
      return Status::FailedPrecondition("callout Secret " + out.ns + "/" + secret_name + ": " +
                                        stored->operator_mode_problem);
    }
    out.operator_mode = stored->operator_mode;
  }
  out.operator_mode_keys = stored->operator_mode;
  auto dir = directory();
  if (!dir.ok()) return dir.status();
  out.directory = std::make_shared<const logic::Directory>(std::move(dir).value());
  return out;
}

}  // namespace

Result<ServedServer> BuildServedServer(
    const json& server,
    const std::vector<std::shared_ptr<const logic::InstallationRecord>>& records,
    const CalloutLookup& callout) {
  return Build(server, callout, [&] { return logic::CollectDirectory(server, records); });
}

Result<ServedServer> BuildServedServer(const json& server, const std::vector<const json*>& backends,
                                       const logic::SecretLookup& secret) {
  auto callout = [&](std::string_view ns,
                     std::string_view name) -> std::shared_ptr<const CalloutSecret> {
    const json* s = secret(ns, name);
    if (s == nullptr) return nullptr;
    return std::make_shared<const CalloutSecret>(CalloutSecretOf(*s));
  };
  return Build(server, callout, [&] { return logic::CollectDirectory(server, backends, secret); });
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
    const logic::AcceptedPasswords now_accepted = it->second.passwords();
    for (const auto& p : was.passwords()) {
      auto same = std::find_if(
          now_accepted.begin(), now_accepted.end(),
          [&](const logic::AcceptedPassword& q) { return q.generation == p.generation; });
      if (same == now_accepted.end()) return true;
      if (same->until && (!p.until || *same->until < *p.until)) return true;
    }
  }
  return false;
}

std::optional<logic::Time> NextRetirement(const logic::Directory& directory, logic::Time now) {
  std::optional<logic::Time> next;
  for (const auto& [user, entry] : directory.by_user) {
    for (const auto& p : entry.passwords()) {
      if (p.until && *p.until > now && (!next || *p.until < *next)) next = p.until;
    }
  }
  return next;
}

}  // namespace switchboard::authorizer
