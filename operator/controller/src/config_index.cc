#include "config_index.h"

#include "switchboard/api/constants.h"
#include "switchboard/operator_logic/cluster_render.h"
#include "switchboard/operator_logic/objects.h"
#include "switchboard/operator_logic/render.h"

namespace switchboard::operator_controller {
namespace logic = ::switchboard::operator_logic;

namespace {

std::string IdOf(const json& secret) {
  const json& meta = secret["metadata"];
  return meta.value("namespace", "") + "/" + meta.value("name", "");
}

}  // namespace

ConfigIndex::Entry_& ConfigIndex::Refresh(const json& secret, const std::string& key) {
  const json& meta = secret["metadata"];
  const std::string version = meta.value("uid", "") + "@" + meta.value("resourceVersion", "");
  Entry_& e = by_secret_[IdOf(secret)];
  if (e.users && e.version == version) return e;
  std::string text;
  auto data = logic::DecodeSecretData(secret);
  if (data.ok()) {
    if (auto it = data->find(key); it != data->end()) text = std::move(it->second);
  }
  std::string hash = logic::ConfigHash(text);
  e.version = version;
  // A new version with the same content (a reloader's report, a label):
  // the same users, since the same configs.
  if (e.users && hash == e.hash) return e;

  const auto now = std::chrono::steady_clock::now();
  const uint64_t order = ++e.order;
  auto users = std::make_shared<Users>();
  for (const auto& u : logic::UsersInConfig(text)) {
    std::string entry = Entry(u.username, u.bcrypt);
    Since since{order, now};
    if (e.users) {
      if (auto old = e.users->find(entry); old != e.users->end()) since = old->second;
    }
    users->emplace(std::move(entry), since);
  }
  e.users = std::move(users);
  e.hash = hash;
  e.orders.emplace_back(std::move(hash), order);
  if (e.orders.size() > kRemembered) e.orders.pop_front();
  e.seen = now;
  return e;
}

std::shared_ptr<const ConfigIndex::Users> ConfigIndex::Get(const json* secret,
                                                           const std::string& key) {
  if (secret == nullptr) return std::make_shared<Users>();
  std::lock_guard lock(mu_);
  return Refresh(*secret, key).users;
}

std::chrono::steady_clock::time_point ConfigIndex::SeenAt(const json* secret) {
  if (secret == nullptr) return {};
  std::lock_guard lock(mu_);
  auto it = by_secret_.find(IdOf(*secret));
  return it == by_secret_.end() ? std::chrono::steady_clock::time_point{} : it->second.seen;
}

logic::ConfigLoadFacts ConfigIndex::LoadFacts(const json* secret, const std::string& key,
                                              const std::string& entry,
                                              std::chrono::steady_clock::time_point now) {
  logic::ConfigLoadFacts f;
  if (secret == nullptr) return f;
  std::lock_guard lock(mu_);
  const Entry_& e = Refresh(*secret, key);
  auto user = e.users->find(entry);
  if (user == e.users->end()) return f;
  const json& meta = (*secret)["metadata"];
  auto ann = meta.find("annotations");
  if (ann == meta.end() || !ann->is_object()) return f;
  auto reported = ann->find(std::string(api::kLoadedConfigHashAnnotation));
  if (reported == ann->end() || !reported->is_string()) return f;
  f.reported_hash = reported->get<std::string>();
  f.current_hash = e.hash;
  for (auto it = e.orders.rbegin(); it != e.orders.rend(); ++it) {
    if (it->first == f.reported_hash) {
      f.reported_order = it->second;
      break;
    }
  }
  f.user_order = user->second.order;
  f.user_waiting = std::chrono::duration_cast<std::chrono::milliseconds>(now - user->second.at);
  return f;
}

}  // namespace switchboard::operator_controller
