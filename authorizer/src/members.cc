#include "switchboard/authorizer/members.h"

#include <algorithm>
#include <set>

namespace switchboard::authorizer {

std::string HostPort(const std::string& url) {
  std::string s = url;
  const auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  s = b == std::string::npos ? "" : s.substr(b, e - b + 1);
  if (auto scheme = s.find("://"); scheme != std::string::npos) s = s.substr(scheme + 3);
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

MemberPlan PlanMembers(const std::vector<std::string>& seeds,
                       const std::vector<std::string>& discovered,
                       const std::vector<MemberState>& members,
                       const std::map<std::string, std::string>& aliases, operator_logic::Time now,
                       std::chrono::milliseconds forget_after) {
  const bool tls = std::any_of(seeds.begin(), seeds.end(),
                               [](const std::string& u) { return u.starts_with("tls://"); });
  // host:port -> the URL to connect with; seeds first, so a seed's text
  // (its scheme) wins over the same address announced.
  std::map<std::string, std::string> wanted;
  std::set<std::string> announced;
  for (const auto& u : seeds) {
    if (auto hp = HostPort(u); !hp.empty()) wanted.emplace(hp, u);
  }
  for (const auto& u : discovered) {
    auto hp = HostPort(u);
    if (hp.empty()) continue;
    announced.insert(hp);
    wanted.emplace(hp, (tls ? "tls://" : "nats://") + hp);
  }

  MemberPlan plan;
  // One member per server id: prefer an announced URL (the server's own
  // address), then the smallest URL.
  std::map<std::string, const MemberState*> keep_for_id;
  auto better = [&](const MemberState& a, const MemberState& b) {
    const bool aa = announced.count(HostPort(a.url)) > 0, ba = announced.count(HostPort(b.url)) > 0;
    if (aa != ba) return aa;
    return a.url < b.url;
  };
  for (const auto& m : members) {
    if (m.server_id.empty()) continue;
    auto [it, inserted] = keep_for_id.emplace(m.server_id, &m);
    if (!inserted && better(m, *it->second)) it->second = &m;
  }

  std::set<std::string> member_hps, held_ids;
  for (const auto& m : members) {
    const std::string hp = HostPort(m.url);
    if (!m.server_id.empty() && keep_for_id.at(m.server_id) != &m) {
      plan.remove.push_back(m.url);
      plan.aliases[m.url] = m.server_id;
      continue;
    }
    std::optional<operator_logic::Time> since;
    if (!wanted.count(hp)) since = m.unwanted_since.value_or(now);
    if (since && m.server_id.empty() && now - *since >= forget_after) {
      plan.remove.push_back(m.url);
      continue;
    }
    plan.unwanted_since[m.url] = since;
    member_hps.insert(hp);
    if (!m.server_id.empty()) held_ids.insert(m.server_id);
  }
  // An alias stays one while a kept member is on its server and the URL
  // is still wanted; otherwise it is tried again (the server restarted
  // under a new id, or the member went).
  for (const auto& [url, id] : aliases) {
    if (held_ids.count(id) && wanted.count(HostPort(url))) plan.aliases.emplace(url, id);
  }
  std::set<std::string> alias_hps;
  for (const auto& [url, id] : plan.aliases) alias_hps.insert(HostPort(url));
  for (const auto& [hp, url] : wanted) {
    if (!member_hps.count(hp) && !alias_hps.count(hp)) plan.add.push_back(url);
  }
  std::sort(plan.add.begin(), plan.add.end());
  std::sort(plan.remove.begin(), plan.remove.end());
  return plan;
}

}  // namespace switchboard::authorizer
