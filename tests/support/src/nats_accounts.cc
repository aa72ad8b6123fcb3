#include "switchboard/testing/nats_accounts.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <system_error>

#include "switchboard/common/base64.h"
#include "switchboard/testing/temp_dir.h"

namespace switchboard::e2e {

namespace fs = std::filesystem;

bool IsCalloutConfig(const std::string& body) {
  return body.find("auth_callout") != std::string::npos;
}

bool IsOperatorModeConfig(const std::string& body) {
  return body.find("default_sentinel") != std::string::npos;
}

std::string StoreDir(const std::string& resolver_dir, int i) {
  return resolver_dir + "-" + std::to_string(i);
}

std::vector<std::string> BodiesWithStores(const std::string& body, const std::string& resolver_dir,
                                          int servers) {
  const std::string quoted = "\"" + resolver_dir + "\"";
  std::vector<std::string> out;
  for (int i = 0; i < servers; i++) {
    std::string b = body;
    if (auto at = b.find(quoted); at != std::string::npos) {
      b.replace(at, quoted.size(), "\"" + StoreDir(resolver_dir, i) + "\"");
    }
    out.push_back(std::move(b));
  }
  return out;
}

std::map<std::string, std::string> StoredJwts(const std::string& store) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(store, ec)) {
    const fs::path& p = entry.path();
    if (p.extension() != ".jwt") continue;
    out[p.stem().string()] = testing::ReadFile(p.string());
  }
  return out;
}

bool StoreHolds(const std::string& store, const std::string& account) {
  return fs::exists(store + "/" + account + ".jwt");
}

std::string ClaimsOf(const std::string& jwt) {
  const auto first = jwt.find('.');
  const auto second = first == std::string::npos ? first : jwt.find('.', first + 1);
  if (second == std::string::npos) return "";
  auto payload = base64::DecodeUrl(std::string_view(jwt).substr(first + 1, second - first - 1));
  if (!payload) return "";
  auto claims = nlohmann::json::parse(*payload, nullptr, false);
  if (!claims.is_object()) return "";
  claims.erase("iat");
  claims.erase("jti");
  return claims.dump();
}

std::vector<ClientConn> Clients(testing::NatsCluster& cluster, int* unanswered) {
  std::vector<ClientConn> out;
  if (unanswered) *unanswered = 0;
  for (int i = 0; i < cluster.size(); i++) {
    if (!cluster.running(i)) continue;
    auto connz = cluster.Monitor(i, "connz?auth=true&limit=100000");
    if (!connz.is_object() && unanswered) ++*unanswered;
    for (const auto& c : connz.value("connections", nlohmann::json::array())) {
      std::string user = c.value("authorized_user", "");
      if (user.empty()) continue;
      out.push_back(
          {i, c.value("cid", uint64_t{0}), user.substr(0, user.find('#')), c.value("account", "")});
    }
  }
  return out;
}

std::vector<std::optional<std::string>> LoadTimes(const testing::NatsCluster& cluster) {
  std::vector<std::optional<std::string>> t;
  for (int i = 0; i < cluster.size(); i++) t.push_back(cluster.ConfigLoadTime(i));
  return t;
}

}  // namespace switchboard::e2e
