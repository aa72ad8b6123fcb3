#include "usage_collector.h"

#include <set>

#include "backend_step.h"
#include "provisioner.h"
#include "switchboard/api/constants.h"
#include "switchboard/api/metadata.h"
#include "switchboard/api/operator_mode.h"
#include "switchboard/common/log.h"
#include "switchboard/operator_logic/callout.h"
#include "switchboard/operator_logic/cluster_render.h"
#include "switchboard/operator_logic/objects.h"
#include "switchboard/operator_logic/render.h"
#include "switchboard/operator_logic/secrets.h"

namespace switchboard::operator_controller {
namespace logic = ::switchboard::operator_logic;

namespace {

constexpr const char* kLogger = "usage";

// The system user's password of `sv`, or nullopt while the operator
// cannot read it (no Secret yet, not ours, undecodable).
std::optional<std::string> SystemPassword(const ReconcileContext& ctx,
                                          const api::NatsServerView& sv) {
  const bool callout = sv.auth_callout();
  const std::string name =
      callout ? sv.callout_secret_name() : logic::UsageSystemSecretName(sv.name());
  kube::ObjectPtr secret = ctx.secrets->Get(sv.ns(), name);
  if (!secret) return std::nullopt;
  auto data = logic::DecodeSecretData(*secret);
  if (!data.ok()) return std::nullopt;
  if (callout) {
    auto keys = logic::DecodeCalloutKeys(*data);
    if (!keys.ok()) return std::nullopt;
    return keys->system.password;
  }
  auto it = data->find(std::string(logic::kUsageSystemPasswordKey));
  if (it == data->end() || it->second.empty()) return std::nullopt;
  return it->second;
}

}  // namespace

std::vector<UsageTarget> UsageTargetsOf(const ReconcileContext& ctx) {
  std::vector<UsageTarget> out;
  CachedInputs cached(ctx);
  for (const kube::ObjectPtr& obj : ctx.servers->List()) {
    const api::NatsServerView sv(*obj);
    if (api::IsDeleting(*obj)) continue;
    if (!sv.auth_callout() && !logic::UsageSystemUserOf(*obj)) continue;
    // Operator mode (isolation: Accounts with AuthCallout) is not collected:
    // its system user logs in with a user JWT, not the callout password,
    // and its accounts are the installations' derived keys.
    if (api::OperatorMode(sv)) continue;
    auto password = SystemPassword(ctx, sv);
    if (!password) continue;
    UsageTarget t;
    t.key = sv.ns() + "/" + sv.name();
    if (sv.auth_callout()) {
      auto directory = logic::CollectDirectory(*obj, cached.backends(), cached.Lookup());
      if (!directory.ok()) continue;
      t.directory = logic::UsageDirectoryOf(*directory);
      t.account = sv.callout_account();
    } else {
      auto collected = logic::CollectInstallations(*obj, cached.backends(), cached.Lookup());
      if (!collected.ok()) continue;
      t.directory = logic::UsageDirectoryOf(collected->input);
      // The shared account of an IncludeFile server is the global one.
      t.statz = t.directory.isolation == logic::Isolation::kAccounts;
      t.account = t.statz ? "" : "$G";
    }
    auto ca = ReadCa(ctx, sv);
    const std::string ca_file = ca.ok() ? CaFileOf(ctx, sv, *ca) : "";
    t.connection.urls = sv.url();
    t.connection.username = std::string(api::kCalloutSystemUsername);
    t.connection.password = *password;
    t.connection.ca_file = ca_file;
    t.connection.name = "switchboard-operator-usage";
    t.connection.connect_timeout = ctx.probe_timeout;
    t.fingerprint = sv.url() + "|" + ca_file + "|" + logic::ConfigHash(*password);
    out.push_back(std::move(t));
  }
  return out;
}

UsageCollector::UsageCollector(UsageMetrics* metrics, Targets targets, StoredConnections stored,
                               WriteConnections write, Options options)
    : metrics_(metrics),
      targets_(std::move(targets)),
      stored_(std::move(stored)),
      write_(std::move(write)),
      options_(options) {}

UsageCollector::~UsageCollector() { Stop(); }

void UsageCollector::Start() {
  thread_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!stop_) {
      lock.unlock();
      RunOnce();
      lock.lock();
      cv_.wait_for(lock, options_.interval, [this] { return stop_; });
    }
  });
}

void UsageCollector::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  servers_.clear();
}

void UsageCollector::RunOnce() {
  std::vector<UsageTarget> targets = targets_();
  std::set<std::string> seen;
  for (UsageTarget& t : targets) {
    seen.insert(t.key);
    PerServer& ps = servers_[t.key];
    const auto started = std::chrono::steady_clock::now();
    if (!ps.source || ps.fingerprint != t.fingerprint) {
      ps.source.reset();
      auto opened = UsageSource::Open(t.connection);
      if (!opened.ok()) {
        log::Warn(kLogger, "cannot connect as the system user",
                  {{"server", t.key}, {"error", opened.status().ToString()}});
        // The figures stay as they were; installations that are gone go.
        ps.ledger.Round(t.directory, {});
        if (metrics_) {
          metrics_->ObserveCollection(t.key, 0, false);
          metrics_->Export(t.key, ps.ledger.usage(), t.directory.limits);
        }
        continue;
      }
      ps.source = std::move(opened).value();
      ps.fingerprint = t.fingerprint;
    }
    auto round = ps.source->Collect(t.account, t.statz, options_.window);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!round.ok()) {
      log::Warn(kLogger, "no NATS server answered",
                {{"server", t.key}, {"error", round.status().ToString()}});
      // The figures stay as they were; installations that are gone go.
      ps.ledger.Round(t.directory, {});
    } else {
      ps.ledger.Round(t.directory, *round);
    }
    if (metrics_) {
      metrics_->ObserveCollection(t.key, seconds, round.ok());
      metrics_->Export(t.key, ps.ledger.usage(), t.directory.limits);
    }
    if (!round.ok() || !write_) continue;
    const auto now = std::chrono::steady_clock::now();
    for (const std::string& inst : t.directory.installations) {
      const int64_t count = ps.ledger.Connections(inst);
      auto last = last_write_.find(inst);
      std::optional<std::chrono::steady_clock::time_point> at;
      if (last != last_write_.end()) at = last->second;
      if (!logic::ShouldWriteConnections(stored_ ? stored_(inst) : std::nullopt, count, at, now)) {
        continue;
      }
      if (write_(inst, count)) last_write_[inst] = now;
    }
  }
  for (auto it = servers_.begin(); it != servers_.end();) {
    if (seen.count(it->first)) {
      ++it;
      continue;
    }
    if (metrics_) metrics_->Forget(it->first);
    it = servers_.erase(it);
  }
  // Backends no longer collected for forget their write times.
  std::set<std::string> installations;
  for (const UsageTarget& t : targets) {
    installations.insert(t.directory.installations.begin(), t.directory.installations.end());
  }
  std::erase_if(last_write_, [&](const auto& e) { return !installations.count(e.first); });
}

const logic::UsageLedger* UsageCollector::LedgerOf(const std::string& key) const {
  auto it = servers_.find(key);
  return it == servers_.end() ? nullptr : &it->second.ledger;
}

}  // namespace switchboard::operator_controller
