// The cost of one per-installation usage round at N installations, without
// servers: the CONNZ pages N installations' connections fill (nats-server's
// reply format, 1,024 connections a page, spread over S servers) are
// parsed (ParseUsageConnz), folded (UsageLedger::Round) and exported
// (UsageMetrics::Export); then the scrape (/metrics text) is rendered.
// Prints per round: parse, fold, export and scrape milliseconds, the
// scrape's size and series count. Network time and the servers' own cost
// of answering CONNZ are not in it (BENCHMARKS.md says what is).
//
//   bench_usage_collection [--installations N] [--connections C] [--servers S] [--rounds R]
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "switchboard/operator_logic/usage.h"
#include "usage_metrics.h"

namespace logic = ::switchboard::operator_logic;
using Clock = std::chrono::steady_clock;

namespace {

double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// The pages of server `s` in round `round` (counters grow with the round).
std::vector<std::string> Pages(int installations, int per, int servers, int s, int round) {
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

}  // namespace

int main(int argc, char** argv) {
  int installations = 10000, per = 2, servers = 3, rounds = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const int v = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--installations"))
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
  prometheus::Registry registry;
  switchboard::operator_controller::UsageMetrics metrics(registry);
  logic::UsageLedger ledger;
  std::printf("installations=%d connections/installation=%d servers=%d\n", installations, per,
              servers);
  for (int r = 1; r <= rounds; ++r) {
    std::vector<std::string> bodies;
    for (int s = 0; s < servers; ++s) {
      for (auto& p : Pages(installations, per, servers, s, r)) bodies.push_back(std::move(p));
    }
    size_t reply_bytes = 0;
    for (const auto& b : bodies) reply_bytes += b.size();
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
        "round %d: replies %zu pages %.1f MB; parse %.0f ms, fold %.0f ms, export %.0f ms "
        "(collection %.0f ms); scrape %.0f ms, %.1f MB, %zu lines\n",
        r, bodies.size(), reply_bytes / 1e6, Ms(t0, t1), Ms(t1, t2), Ms(t2, t3), Ms(t0, t3),
        Ms(t3, t4), text.size() / 1e6, series);
  }
  return 0;
}
