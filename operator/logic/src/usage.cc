#include "switchboard/operator_logic/usage.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "switchboard/api/constants.h"
#include "switchboard/operator_logic/callout.h"
#include "switchboard/operator_logic/credentials.h"
#include "switchboard/operator_logic/operator_mode_keys.h"

namespace switchboard::operator_logic {

using nlohmann::json;

namespace {

// The server's error in a $SYS.REQ reply, or nullptr.
const json* ErrorOf(const json& reply) {
  auto it = reply.find("error");
  return it != reply.end() && it->is_object() ? &*it : nullptr;
}

std::string Describe(const json& error) {
  std::string d = error.value("description", "");
  return d.empty() ? "error " + std::to_string(error.value("code", 0)) : d;
}

int64_t Int(const json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

// {"msgs":N,"bytes":N}
std::pair<int64_t, int64_t> MsgsBytes(const json& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_object()) return {0, 0};
  return {Int(*it, "msgs"), Int(*it, "bytes")};
}

// STATZ's {"msgs":N,"bytes":N,"routes":{...},"gateways":{...},"leafs":{...}}
// (nats-server 2.10+) less what crossed routes, gateways and leaf nodes:
// what the account's client connections on that server sent or received.
// A message published on one server and delivered on another is then
// counted once in and once out, not again on each server it crossed.
// nats-server 2.9 has no breakdown: there the totals are taken as they are.
std::pair<int64_t, int64_t> ClientMsgsBytes(const json& o, const char* key) {
  auto [msgs, bytes] = MsgsBytes(o, key);
  auto it = o.find(key);
  if (it == o.end() || !it->is_object()) return {msgs, bytes};
  for (const char* link : {"routes", "gateways", "leafs"}) {
    auto [m, b] = MsgsBytes(*it, link);
    msgs -= m;
    bytes -= b;
  }
  return {std::max<int64_t>(msgs, 0), std::max<int64_t>(bytes, 0)};
}

// The answering server's id and name from a reply's "server" object.
std::pair<std::string, std::string> ServerOf(const json& reply) {
  auto it = reply.find("server");
  if (it == reply.end() || !it->is_object()) return {};
  std::string id = it->value("id", "");
  std::string name = it->value("name", "");
  if (name.empty()) name = id;
  return {id, name};
}

}  // namespace

Result<json> ParseSysReply(std::string_view body, std::string_view what) {
  json reply = json::parse(body, nullptr, false);
  if (!reply.is_object()) {
    return Status::InvalidArgument(std::string(what) + " reply is not a JSON object");
  }
  if (const json* error = ErrorOf(reply)) {
    return Status::Unavailable(std::string(what) + " refused by the server: " + Describe(*error));
  }
  return reply;
}

Traffic& Traffic::operator+=(const Traffic& o) {
  msgs_in += o.msgs_in;
  msgs_out += o.msgs_out;
  bytes_in += o.bytes_in;
  bytes_out += o.bytes_out;
  return *this;
}

bool UsageSystemUserOf(const json& server) {
  return server.is_object() && api::UsageSystemUser(api::NatsServerView(server));
}

namespace {

// `  "SYS": {users: [{user: "switchboard-system", password: "<bcrypt>"}]}`
// and the closing of the block and the system_account line. Names and
// hash are quoted as the render quotes: nothing in them needs escaping
// (the hash was checked), so plain quotes suffice.
std::string SystemAccountLines(std::string_view bcrypt) {
  std::string out = "  \"";
  out += api::kCalloutSystemAccount;
  out += "\": {users: [{user: \"";
  out += api::kCalloutSystemUsername;
  out += "\", password: \"";
  out += bcrypt;
  out += "\"}]}\n}\nsystem_account: \"";
  out += api::kCalloutSystemAccount;
  out += "\"\n";
  return out;
}

}  // namespace

size_t SystemUserBytes(std::string_view bcrypt) {
  return SystemAccountLines(bcrypt).size() + std::string_view("accounts {\n").size();
}

Status AddSystemUser(RenderedConfig& rendered, Isolation isolation, std::string_view bcrypt) {
  if (!IsBcryptHash(bcrypt)) {
    return Status::InvalidArgument(
        "the system Secret's \"bcrypt\" is not a bcrypt hash; delete the Secret to regenerate it");
  }
  std::string& text = rendered.text;
  // With no installation the file is an authorization block whatever the
  // isolation (the locked placeholder user).
  const bool accounts_block = isolation == Isolation::kAccounts && rendered.installations > 0;
  constexpr std::string_view kUsersEnd = "  ]\n}\n";
  constexpr std::string_view kAccountsEnd = "    ]\n  }\n}\n";
  if (accounts_block) {
    if (!text.ends_with(kAccountsEnd)) {
      return Status::InvalidArgument("the rendered file does not end with its accounts block");
    }
    text.resize(text.size() - 2);  // the accounts block's closing "}\n"
  } else {
    if (!text.ends_with(kUsersEnd)) {
      return Status::InvalidArgument("the rendered file does not end with its users block");
    }
    text += "accounts {\n";
  }
  text += SystemAccountLines(bcrypt);
  rendered.hash = ConfigHash(text);
  return Status::Ok();
}

Result<UsageSystemPlan> PlanUsageSystemSecret(const std::optional<SecretData>& stored) {
  UsageSystemPlan plan;
  if (stored) {
    auto pw = stored->find(std::string(kUsageSystemPasswordKey));
    auto hash = stored->find(std::string(kUsageSystemBcryptKey));
    if (pw != stored->end() && !pw->second.empty() && hash != stored->end() &&
        IsBcryptHash(hash->second)) {
      plan.bcrypt = hash->second;
      plan.data = {{std::string(kUsageSystemPasswordKey), pw->second},
                   {std::string(kUsageSystemBcryptKey), hash->second}};
      plan.changed = plan.data != *stored;
      return plan;
    }
  }
  auto password = GeneratePassword();
  if (!password.ok()) return password.status();
  auto hash = BcryptHash(*password, kGeneratedPasswordBcryptCost);
  if (!hash.ok()) return hash.status();
  plan.bcrypt = *hash;
  plan.data = {{std::string(kUsageSystemPasswordKey), *password},
               {std::string(kUsageSystemBcryptKey), *hash}};
  plan.changed = true;
  return plan;
}

std::string UsageConnzRequest(std::string_view account, int64_t offset, int limit) {
  json r = {{"auth", true}, {"offset", offset}, {"limit", limit}};
  if (!account.empty()) r["acc"] = account;
  return r.dump();
}

std::string ServerConnzSubject(std::string_view server_id) {
  return "$SYS.REQ.SERVER." + std::string(server_id) + ".CONNZ";
}

std::string AccountStatzRequest() { return json{{"accounts", json::array()}}.dump(); }

Result<UsageConnzPage> ParseUsageConnz(std::string_view body) {
  auto reply = ParseSysReply(body, "CONNZ");
  if (!reply.ok()) return reply.status();
  auto data = reply->find("data");
  if (data == reply->end() || !data->is_object()) {
    return Status::InvalidArgument("CONNZ reply has no data object");
  }
  UsageConnzPage page;
  std::tie(page.server_id, page.server_name) = ServerOf(*reply);
  if (page.server_id.empty()) page.server_id = data->value("server_id", "");
  if (page.server_id.empty()) return Status::InvalidArgument("CONNZ reply names no server id");
  if (page.server_name.empty()) page.server_name = page.server_id;
  page.total = Int(*data, "total");
  page.offset = Int(*data, "offset");
  auto conns = data->find("connections");
  if (conns != data->end() && conns->is_array()) {
    page.connections.reserve(conns->size());
    for (const auto& c : *conns) {
      if (!c.is_object() || !c.contains("cid") || !c["cid"].is_number_unsigned()) continue;
      SampledConnection s;
      s.server_id = page.server_id;
      s.server_name = page.server_name;
      s.cid = c["cid"].get<uint64_t>();
      s.account = c.value("account", "");
      s.user = c.value("authorized_user", "");
      s.subscriptions = Int(c, "subscriptions");
      s.traffic = {Int(c, "in_msgs"), Int(c, "out_msgs"), Int(c, "in_bytes"), Int(c, "out_bytes")};
      page.connections.push_back(std::move(s));
    }
  }
  return page;
}

std::vector<int64_t> RemainingConnzOffsets(const UsageConnzPage& page, int limit) {
  std::vector<int64_t> out;
  if (limit <= 0) return out;
  for (int64_t at = page.offset + limit; at < page.total; at += limit) out.push_back(at);
  return out;
}

Result<ClosedConnection> ParseDisconnectEvent(std::string_view body) {
  json event = json::parse(body, nullptr, false);
  if (!event.is_object() ||
      event.value("type", "") != "io.nats.server.advisory.v1.client_disconnect") {
    return Status::InvalidArgument("not a client_disconnect event");
  }
  auto client = event.find("client");
  if (client == event.end() || !client->is_object() || !client->contains("id") ||
      !(*client)["id"].is_number_unsigned()) {
    return Status::InvalidArgument("client_disconnect event names no client id");
  }
  ClosedConnection c;
  std::tie(c.server_id, c.server_name) = ServerOf(event);
  if (c.server_id.empty())
    return Status::InvalidArgument("client_disconnect event names no server");
  c.cid = (*client)["id"].get<uint64_t>();
  c.account = client->value("acc", "");
  // A callout user's name is in name_tag when the server sets one; user
  // is its key. The directory is asked with both (see InstallationOf).
  c.user = client->value("user", "");
  if (std::string tag = client->value("name_tag", ""); !tag.empty()) c.user = tag;
  auto [sent_msgs, sent_bytes] = MsgsBytes(event, "sent");
  auto [recv_msgs, recv_bytes] = MsgsBytes(event, "received");
  c.traffic = {sent_msgs, recv_msgs, sent_bytes, recv_bytes};
  c.slow_consumer = event.value("reason", "").find("Slow Consumer") != std::string::npos;
  return c;
}

Result<std::vector<AccountStat>> ParseAccountStatz(std::string_view body) {
  auto reply = ParseSysReply(body, "STATZ");
  if (!reply.ok()) return reply.status();
  auto data = reply->find("data");
  if (data == reply->end() || !data->is_object()) {
    return Status::InvalidArgument("STATZ reply has no data object");
  }
  auto [id, name] = ServerOf(*reply);
  if (id.empty()) id = data->value("server_id", "");
  if (id.empty()) return Status::InvalidArgument("STATZ reply names no server id");
  if (name.empty()) name = id;
  std::vector<AccountStat> out;
  auto accounts = data->find("account_statz");
  if (accounts == data->end() || !accounts->is_array()) return out;
  for (const auto& a : *accounts) {
    if (!a.is_object() || !a.contains("acc") || !a["acc"].is_string()) continue;
    AccountStat s;
    s.server_id = id;
    s.server_name = name;
    s.account = a["acc"].get<std::string>();
    s.connections = Int(a, "conns");
    // The server's view: it sent to the clients (out), received from them
    // (in); the account's traffic over routes, gateways and leaf nodes left out.
    auto [sent_msgs, sent_bytes] = ClientMsgsBytes(a, "sent");
    auto [recv_msgs, recv_bytes] = ClientMsgsBytes(a, "received");
    s.traffic = {recv_msgs, sent_msgs, recv_bytes, sent_bytes};
    s.slow_consumers = Int(a, "slow_consumers");
    out.push_back(std::move(s));
  }
  return out;
}

UsageDirectory UsageDirectoryOf(const RenderInput& rendered) {
  UsageDirectory d;
  d.isolation = rendered.isolation;
  for (const Installation& inst : rendered.installations) {
    const std::string key = inst.ns + "/" + inst.name;
    d.installations.insert(key);
    for (const NatsUser& u : inst.users) d.by_user.emplace(u.username, key);
    d.by_account.emplace(key, key);
    if (rendered.isolation == Isolation::kAccounts && !inst.limits.empty()) {
      d.limits.emplace(key, inst.limits);
    }
  }
  return d;
}

UsageDirectory UsageDirectoryOf(const Directory& callout) {
  UsageDirectory d;
  d.isolation = Isolation::kPermissions;
  for (const auto& [user, entry] : callout.by_user) {
    const std::string key = entry.ns() + "/" + entry.name();
    d.installations.insert(key);
    d.by_user.emplace(user, key);
  }
  return d;
}

Result<std::string> InstallationAccountCache::Of(const natsauth::KeyPair& signing,
                                                 std::string_view ns, std::string_view name) {
  auto& under = by_signing_[signing.public_key()];
  std::string key = std::string(ns) + "/" + std::string(name);
  auto it = under.find(key);
  if (it == under.end()) {
    auto account = InstallationAccountKey(signing, ns, name);
    if (!account.ok()) return account.status();
    it = under.emplace(std::move(key), Entry{account->public_key(), false}).first;
  }
  it->second.asked = true;
  return it->second.account;
}

void InstallationAccountCache::Retain(const std::set<std::string, std::less<>>& signing_keys) {
  std::erase_if(by_signing_, [&](const auto& e) { return !signing_keys.count(e.first); });
  for (auto& [signing, under] : by_signing_) {
    std::erase_if(under, [](const auto& e) { return !e.second.asked; });
    for (auto& [key, entry] : under) entry.asked = false;
  }
}

size_t InstallationAccountCache::size() const {
  size_t n = 0;
  for (const auto& [signing, under] : by_signing_) n += under.size();
  return n;
}

Result<UsageDirectory> OperatorModeUsageDirectoryOf(
    const Directory& callout, const natsauth::KeyPair& installation_signing,
    const std::map<std::string, InstallationLimits, std::less<>>& limits,
    InstallationAccountCache* cache) {
  UsageDirectory d;
  d.isolation = Isolation::kAccounts;
  for (const auto& [user, entry] : callout.by_user) {
    const std::string key = entry.ns() + "/" + entry.name();
    std::string account;
    if (cache) {
      auto cached = cache->Of(installation_signing, entry.ns(), entry.name());
      if (!cached.ok()) return cached.status();
      account = std::move(cached).value();
    } else {
      auto derived = InstallationAccountKey(installation_signing, entry.ns(), entry.name());
      if (!derived.ok()) return derived.status();
      account = derived->public_key();
    }
    d.installations.insert(key);
    d.by_account.emplace(account, key);
    if (auto l = limits.find(key); l != limits.end() && !l->second.empty()) {
      d.limits.emplace(key, l->second);
    }
  }
  return d;
}

const std::string* InstallationOf(const UsageDirectory& directory, std::string_view account,
                                  std::string_view user) {
  if (directory.isolation == Isolation::kAccounts) {
    auto it = directory.by_account.find(account);
    return it == directory.by_account.end() ? nullptr : &it->second;
  }
  auto it = directory.by_user.find(user);
  if (it == directory.by_user.end()) {
    if (auto hash = user.rfind('#'); hash != std::string_view::npos) {
      it = directory.by_user.find(user.substr(0, hash));
    }
  }
  return it == directory.by_user.end() ? nullptr : &it->second;
}

void UsageLedger::Round(const UsageDirectory& directory, const UsageRound& round) {
  const std::set<std::string> answered(round.answered.begin(), round.answered.end());
  auto installed = [&](const UsageKey& key) { return directory.installations.count(key.first); };

  // 1. Closed connections: their final counters, once. A connection folded
  //    in at its last sample in the round before adds what it missed.
  std::set<ConnId> closed_now;
  for (const ClosedConnection& c : round.closed) {
    const std::string* inst = InstallationOf(directory, c.account, c.user);
    if (inst == nullptr) continue;
    server_names_[c.server_id] = c.server_name;
    const UsageKey key{*inst, c.server_name};
    const ConnId id{c.server_id, c.cid};
    Traffic add = c.traffic;
    open_.erase(id);
    if (auto it = folded_.find(id); it != folded_.end()) {
      const Traffic* counted = &it->second.traffic;
      add.msgs_in -= std::min(add.msgs_in, counted->msgs_in);
      add.msgs_out -= std::min(add.msgs_out, counted->msgs_out);
      add.bytes_in -= std::min(add.bytes_in, counted->bytes_in);
      add.bytes_out -= std::min(add.bytes_out, counted->bytes_out);
      folded_.erase(it);
    }
    closed_traffic_[key] += add;
    if (c.slow_consumer) ++closed_slow_[key];
    closed_now.insert(id);
  }

  // 2. The live connections of the servers that answered.
  std::map<ConnId, Open> next_open;
  std::map<UsageKey, ServerUsage> live;
  for (const SampledConnection& s : round.live) {
    const ConnId id{s.server_id, s.cid};
    if (closed_now.count(id)) continue;  // sampled before its event
    const std::string* inst = InstallationOf(directory, s.account, s.user);
    if (inst == nullptr) continue;
    server_names_[s.server_id] = s.server_name;
    const UsageKey key{*inst, s.server_name};
    next_open[id] = {key, s.traffic};
    ServerUsage& u = live[key];
    ++u.connections;
    u.subscriptions += s.subscriptions;
    u.max_subscriptions_per_connection =
        std::max(u.max_subscriptions_per_connection, s.subscriptions);
    u.traffic += s.traffic;
  }

  // 3. Gone without an event from a server that answered: folded in at its
  //    last sample. Of a server that did not answer: kept as it was.
  std::map<ConnId, Open> next_folded;
  for (auto& [id, open] : open_) {
    if (next_open.count(id)) continue;
    if (!answered.count(id.first)) {
      next_open.emplace(id, open);
      continue;
    }
    closed_traffic_[open.key] += open.traffic;
    next_folded.emplace(id, std::move(open));
  }
  open_ = std::move(next_open);
  folded_ = std::move(next_folded);

  // 4. The figures. A server that did not answer keeps its last ones.
  std::map<UsageKey, ServerUsage> next;
  std::set<std::string> answered_names;
  for (const std::string& id : answered) {
    if (auto it = server_names_.find(id); it != server_names_.end()) {
      answered_names.insert(it->second);
    }
  }
  for (const auto& [key, u] : usage_) {
    if (!answered_names.count(key.second) && installed(key)) next[key] = u;
  }
  if (directory.isolation == Isolation::kAccounts) {
    for (const AccountStat& s : round.stats) {
      const std::string* inst = InstallationOf(directory, s.account, "");
      if (inst == nullptr) continue;
      ServerUsage& u = next[{*inst, s.server_name}];
      u.traffic = s.traffic;
      u.slow_consumers = s.slow_consumers;
    }
    // An account a server did not report (no connection there now) keeps
    // its totals.
    for (const auto& [key, u] : usage_) {
      if (!installed(key) || next.count(key)) continue;
      ServerUsage kept;
      kept.traffic = u.traffic;
      kept.slow_consumers = u.slow_consumers;
      next[key] = kept;
    }
    for (const auto& [key, l] : live) {
      ServerUsage& u = next[key];
      u.connections = l.connections;
      u.subscriptions = l.subscriptions;
      u.max_subscriptions_per_connection = l.max_subscriptions_per_connection;
    }
  } else {
    for (const auto& [key, t] : closed_traffic_) {
      if (!answered_names.count(key.second)) continue;
      next[key].traffic = t;
    }
    for (const auto& [key, n] : closed_slow_) {
      if (!answered_names.count(key.second)) continue;
      next[key].slow_consumers = n;
    }
    for (const auto& [key, l] : live) {
      ServerUsage& u = next[key];
      u.connections = l.connections;
      u.subscriptions = l.subscriptions;
      u.max_subscriptions_per_connection = l.max_subscriptions_per_connection;
      u.traffic += l.traffic;
    }
  }

  // 5. Installations that are gone leave no state behind.
  std::erase_if(next, [&](const auto& e) { return !installed(e.first); });
  std::erase_if(closed_traffic_, [&](const auto& e) { return !installed(e.first); });
  std::erase_if(closed_slow_, [&](const auto& e) { return !installed(e.first); });
  std::erase_if(open_, [&](const auto& e) { return !installed(e.second.key); });
  std::erase_if(folded_, [&](const auto& e) { return !installed(e.second.key); });
  usage_ = std::move(next);
}

int64_t UsageLedger::Connections(std::string_view installation) const {
  int64_t n = 0;
  for (auto it = usage_.lower_bound({std::string(installation), std::string()});
       it != usage_.end() && it->first.first == installation; ++it) {
    n += it->second.connections;
  }
  return n;
}

int64_t CounterIncrement(int64_t last, int64_t now) {
  if (now < 0) return 0;
  return now >= last ? now - last : now;
}

bool ShouldWriteConnections(std::optional<int64_t> stored, int64_t now_count,
                            std::optional<std::chrono::steady_clock::time_point> last_write,
                            std::chrono::steady_clock::time_point now) {
  if (stored && *stored == now_count) return false;
  return !last_write || now - *last_write >= kConnectionsStatusInterval;
}

}  // namespace switchboard::operator_logic
