#include "config_index.h"

#include <algorithm>

#include "switchboard/api/constants.h"
#include "switchboard/common/base64.h"
#include "switchboard/operator_logic/cluster_render.h"
#include "switchboard/operator_logic/objects.h"
#include "switchboard/operator_logic/render.h"

namespace switchboard::operator_controller {
namespace logic = ::switchboard::operator_logic;

namespace {

// The value of data[key] decoded; empty when absent or not base64.
std::string DataText(const SecretRecord& secret, const std::string& key) {
  for (const auto& [k, v] : secret.data) {
    if (k != key) continue;
    auto decoded = base64::Decode(std::string_view(v));
    return decoded ? std::move(*decoded) : std::string();
  }
  return {};
}

}  // namespace

ConfigIndex::Entry_& ConfigIndex::Refresh(const SecretRecord& secret, const std::string& key) {
  const std::string version = secret.uid + "@" + secret.resource_version;
  Entry_& e = by_secret_[secret.ns + "/" + secret.name];
  if (e.users && e.version == version) return e;
  std::string text = DataText(secret, key);
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
  return e;
}

std::shared_ptr<const ConfigIndex::Users> ConfigIndex::Get(const SecretRecord* secret,
                                                           const std::string& key) {
  if (secret == nullptr) return std::make_shared<Users>();
  std::lock_guard lock(mu_);
  return Refresh(*secret, key).users;
}

logic::ConfigLoadFacts ConfigIndex::LoadFacts(const SecretRecord* secret, const std::string& key,
                                              const std::string& entry,
                                              std::chrono::steady_clock::time_point now) {
  logic::ConfigLoadFacts f;
  if (secret == nullptr) return f;
  std::lock_guard lock(mu_);
  const Entry_& e = Refresh(*secret, key);
  auto user = e.users->find(entry);
  if (user == e.users->end()) return f;
  f.user_order = user->second.order;
  f.user_waiting = std::chrono::duration_cast<std::chrono::milliseconds>(now - user->second.at);
  const auto reported =
      std::find_if(secret->annotations.begin(), secret->annotations.end(),
                   [](const auto& a) { return a.first == api::kLoadedConfigHashAnnotation; });
  if (reported == secret->annotations.end()) return f;
  f.reported_hash = reported->second;
  f.current_hash = e.hash;
  for (auto it = e.orders.rbegin(); it != e.orders.rend(); ++it) {
    if (it->first == f.reported_hash) {
      f.reported_order = it->second;
      break;
    }
  }
  return f;
}

std::vector<std::string> ConfigIndex::RecordRender(const std::string& server_key,
                                                   const std::vector<logic::Rejected>& rejected) {
  Omissions now;
  for (const auto& r : rejected) {
    std::string message = r.field.empty() ? r.message : r.field + ": " + r.message;
    now[r.ns + "/" + r.name].push_back({r.user, {std::string(r.reason), std::move(message)}});
  }
  std::vector<std::string> changed;
  std::lock_guard lock(mu_);
  Omissions& before = renders_[server_key];
  for (const auto& [backend, list] : now) {
    auto it = before.find(backend);
    if (it == before.end() || it->second != list) changed.push_back(backend);
  }
  for (const auto& [backend, list] : before) {
    if (!now.count(backend)) changed.push_back(backend);
  }
  before = std::move(now);
  return changed;
}

void ConfigIndex::ForgetRender(const std::string& server_key) {
  std::lock_guard lock(mu_);
  renders_.erase(server_key);
}

ConfigIndex::Verdict ConfigIndex::VerdictOn(const std::string& server_key,
                                            const std::string& backend_key,
                                            const std::string& user) {
  Verdict v;
  std::lock_guard lock(mu_);
  auto server = renders_.find(server_key);
  if (server == renders_.end()) return v;
  v.rendered = true;
  auto backend = server->second.find(backend_key);
  if (backend == server->second.end()) return v;
  for (const auto& o : backend->second) {
    if (o.user.empty() || o.user == user) {
      v.left_out = o.why;
      break;
    }
  }
  return v;
}

}  // namespace switchboard::operator_controller
