// The cost of one per-installation usage round at N installations, without
// servers: the CONNZ pages N installations' connections fill (nats-server's
// reply format, 1,024 connections a page, spread over S servers) are
// parsed (ParseUsageConnz), folded (UsageLedger::Round) and exported
// (UsageMetrics::Export); then the scrape (/metrics text) is rendered.
// Prints per round: parse, fold, export and scrape milliseconds, the
// scrape's size and series count. Network time and the servers' own cost
// of answering CONNZ are not in it (BENCHMARKS.md says what is).
//
// --mode operator: NATS operator mode (AuthCallout with isolation:
// Accounts). Each round first builds the directory as the collector does
// (OperatorModeUsageDirectoryOf: one derived account key per
// installation, remembered from the first round on as the collector
// remembers them), every connection names its installation's account key,
// and each server's STATZ reply (its accounts' counters) is parsed too.
//
//   bench_usage_collection [--installations N] [--connections C] [--servers S] [--rounds R]
//                          [--mode shared|operator]
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "switchboard/natsauth/nkey.h"
#include "switchboard/operator_logic/callout.h"
#include "switchboard/operator_logic/operator_mode_keys.h"
#include "switchboard/operator_logic/usage.h"
#include "usage_metrics.h"

namespace logic = ::switchboard::operator_logic;
using Clock = std::chrono::steady_clock;

namespace {

double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// The pages of server `s` in round `round` (counters grow with the round).
// `accounts` (operator mode): installation i's connections are in
// accounts[i] and their user is "<user>#0"; empty: the shared account.
std::vector<std::string> Pages(int installations, int per, int servers, int s, int round,
                               const std::vector<std::string>& accounts) {
  std::vector<nlohmann::json> conns;
  uint64_t cid = 1;
  for (int i = 0; i < installations; ++i) {
    for (int c = 0; c < per; ++c) {
      if ((i * per + c) % servers != s) continue;
      conns.push_back({{"cid", cid++},
                       {"kind", "Client"},
                       {"type", "nats"},
                       {"ip", "10.0.0.1"},
                       {"port", 40000 + c},
                       {"start", "2026-12-03T16:30:01.557559758Z"},
                       {"last_activity", "2026-12-03T16:30:01.698433567Z"},
                       {"rtt", "1.1ms"},
                       {"uptime", "1h"},
                       {"idle", "0s"},
                       {"pending_bytes", 0},
                       {"in_msgs", 100 * round},
                       {"out_msgs", 300 * round},
                       {"in_bytes", 100000 * round},
                       {"out_bytes", 300000 * round},
                       {"subscriptions", 12},
                       {"lang", "go"},
                       {"version", "1.37.0"},
                       {"authorized_user", "team-" + std::to_string(i) + "-hatchet"}});
      if (!accounts.empty()) {
        conns.back()["account"] = accounts[i];
        conns.back()["authorized_user"] = "team-" + std::to_string(i) + "-hatchet#0";
      }
    }
  }
  std::vector<std::string> out;
  const size_t page = logic::kConnzPageSize;
  for (size_t at = 0; at < conns.size() || at == 0; at += page) {
    nlohmann::json data = {{"server_id", "NSERVER" + std::to_string(s)},
                           {"num_connections", conns.size()},
                           {"total", conns.size()},
                           {"offset", at},
                           {"limit", page},
                           {"connections", nlohmann::json::array()}};
    for (size_t k = at; k < std::min(conns.size(), at + page); ++k) {
      data["connections"].push_back(conns[k]);
    }
    out.push_back(nlohmann::json{
        {"server", {{"name", "nats-" + std::to_string(s)}, {"id", "NSERVER" + std::to_string(s)}}},
        {"data",
         data}}.dump());
    if (conns.empty()) break;
  }
  return out;
}

// Server `s`'s STATZ reply: every account with a connection there.
std::string Statz(int installations, int per, int servers, int s, int round,
                  const std::vector<std::string>& accounts) {
  nlohmann::json stats = nlohmann::json::array();
  for (int i = 0; i < installations; ++i) {
    int here = 0;
    for (int c = 0; c < per; ++c) here += (i * per + c) % servers == s;
    if (here == 0) continue;
    stats.push_back({{"acc", accounts[i]},
                     {"conns", here},
                     {"leafnodes", 0},
                     {"total_conns", here},
                     {"num_subscriptions", 12 * here},
                     {"sent", {{"msgs", 300 * round * here}, {"bytes", 300000 * round * here}}},
                     {"received", {{"msgs", 100 * round * here}, {"bytes", 100000 * round * here}}},
                     {"slow_consumers", 0}});
  }
  return nlohmann::json{
      {"server", {{"name", "nats-" + std::to_string(s)}, {"id", "NSERVER" + std::to_string(s)}}},
      {"data", {{"server_id", "NSERVER" + std::to_string(s)}, {"account_statz", stats}}}}
      .dump();
}

}  // namespace

int main(int argc, char** argv) {
  int installations = 10000, per = 2, servers = 3, rounds = 3;
  bool operator_mode = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    const int v = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--mode")) {
      operator_mode = !std::strcmp(argv[i + 1], "operator");
      if (!operator_mode && std::strcmp(argv[i + 1], "shared")) {
        std::fprintf(stderr, "--mode is shared or operator\n");
        return 2;
      }
    } else if (!std::strcmp(argv[i], "--installations"))
      installations = v;
    else if (!std::strcmp(argv[i], "--connections"))
      per = v;
    else if (!std::strcmp(argv[i], "--servers"))
      servers = v;
    else if (!std::strcmp(argv[i], "--rounds"))
      rounds = v;
    else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  logic::UsageDirectory directory;
  for (int i = 0; i < installations; ++i) {
    const std::string key = "team-" + std::to_string(i) + "/hatchet";
    directory.installations.insert(key);
    directory.by_user.emplace("team-" + std::to_string(i) + "-hatchet", key);
  }
  // Operator mode: the authorizer's directory, and each installation's
  // account key (derived once here to write the replies).
  logic::Directory callout;
  std::vector<std::string> accounts;
  // As the collector keeps it: the first round derives, the next ones find.
  logic::InstallationAccountCache account_keys;
  auto signing = switchboard::natsauth::KeyPair::Generate(switchboard::natsauth::KeyType::kAccount);
  if (!signing.ok()) return 1;
  if (operator_mode) {
    for (int i = 0; i < installations; ++i) {
      auto record = std::make_shared<logic::InstallationRecord>();
      record->ns = "team-" + std::to_string(i);
      record->name = "hatchet";
      logic::CredentialState state;
      state.current.username = record->ns + "-" + record->name;
      record->credentials = std::make_shared<const logic::CredentialState>(state);
      callout.Add(logic::DirectoryEntry(record, state.current.username));
      accounts.push_back(
          logic::InstallationAccountKey(*signing, record->ns, record->name).value().public_key());
    }
  }
  prometheus::Registry registry;
  switchboard::operator_controller::UsageMetrics metrics(registry);
  logic::UsageLedger ledger;
  std::printf("mode=%s installations=%d connections/installation=%d servers=%d\n",
              operator_mode ? "operator" : "shared", installations, per, servers);
  for (int r = 1; r <= rounds; ++r) {
    std::vector<std::string> bodies, statz;
    for (int s = 0; s < servers; ++s) {
      for (auto& p : Pages(installations, per, servers, s, r, accounts)) {
        bodies.push_back(std::move(p));
      }
      if (operator_mode) statz.push_back(Statz(installations, per, servers, s, r, accounts));
    }
    size_t reply_bytes = 0;
    for (const auto& b : bodies) reply_bytes += b.size();
    for (const auto& b : statz) reply_bytes += b.size();
    const auto td = Clock::now();
    if (operator_mode) {
      auto d = logic::OperatorModeUsageDirectoryOf(callout, *signing, {}, &account_keys);
      if (!d.ok()) {
        std::fprintf(stderr, "%s\n", d.status().ToString().c_str());
        return 1;
      }
      directory = std::move(d).value();
    }
    const auto t0 = Clock::now();
    logic::UsageRound round;
    for (int s = 0; s < servers; ++s) round.answered.push_back("NSERVER" + std::to_string(s));
    for (const auto& b : bodies) {
      auto page = logic::ParseUsageConnz(b);
      if (!page.ok()) {
        std::fprintf(stderr, "%s\n", page.status().ToString().c_str());
        return 1;
      }
      for (auto& c : page->connections) round.live.push_back(std::move(c));
    }
    for (const auto& b : statz) {
      auto stats = logic::ParseAccountStatz(b);
      if (!stats.ok()) {
        std::fprintf(stderr, "%s\n", stats.status().ToString().c_str());
        return 1;
      }
      for (auto& st : *stats) round.stats.push_back(std::move(st));
    }
    const auto t1 = Clock::now();
    ledger.Round(directory, round);
    const auto t2 = Clock::now();
    metrics.Export("nats/shared", ledger.usage(), directory.limits);
    const auto t3 = Clock::now();
    const std::string text = prometheus::TextSerializer().Serialize(registry.Collect());
    const auto t4 = Clock::now();
    size_t series = 0;
    for (char c : text) series += c == '\n';
    std::printf(
        "round %d: replies %zu pages %.1f MB; directory %.0f ms, parse %.0f ms, fold %.0f ms, "
        "export %.0f ms (collection %.0f ms); scrape %.0f ms, %.1f MB, %zu lines\n",
        r, bodies.size() + statz.size(), reply_bytes / 1e6, Ms(td, t0), Ms(t0, t1), Ms(t1, t2),
        Ms(t2, t3), Ms(td, t3), Ms(t3, t4), text.size() / 1e6, series);
  }
  return 0;
}
