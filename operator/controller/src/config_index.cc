#include "config_index.h"

#include "switchboard/operator_logic/cluster_render.h"
#include "switchboard/operator_logic/objects.h"

namespace switchboard::operator_controller {
namespace logic = ::switchboard::operator_logic;

ConfigIndex::Entry_& ConfigIndex::Refresh(const json& secret, const std::string& key) {
  const json& meta = secret["metadata"];
  const std::string id = meta.value("namespace", "") + "/" + meta.value("name", "");
  const std::string version = meta.value("uid", "") + "@" + meta.value("resourceVersion", "");
  Entry_& e = by_secret_[id];
  if (e.users && e.version == version) return e;
  auto users = std::make_shared<Users>();
  auto data = logic::DecodeSecretData(secret);
  if (data.ok()) {
    auto it = data->find(key);
    if (it != data->end()) {
      for (const auto& u : logic::UsersInConfig(it->second)) {
        users->insert(Entry(u.username, u.bcrypt));
      }
    }
  }
  e.version = version;
  e.users = std::move(users);
  e.seen = std::chrono::steady_clock::now();
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
  auto it = by_secret_.find(secret->at("metadata").value("namespace", "") + "/" +
                            secret->at("metadata").value("name", ""));
  return it == by_secret_.end() ? std::chrono::steady_clock::time_point{} : it->second.seen;
}

}  // namespace switchboard::operator_controller
