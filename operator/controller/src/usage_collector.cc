#include "usage_collector.h"

#include <ctime>
#include <set>

#include "backend_step.h"
#include "operator_mode_connection.h"
#include "provisioner.h"
#include "secret_cache.h"
#include "switchboard/api/constants.h"
#include "switchboard/api/metadata.h"
#include "switchboard/api/operator_mode.h"
#include "switchboard/common/log.h"
#include "switchboard/operator_logic/callout.h"
#include "switchboard/operator_logic/cluster_render.h"
#include "switchboard/operator_logic/limits.h"
#include "switchboard/operator_logic/objects.h"
#include "switchboard/operator_logic/operator_mode_keys.h"
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

// A server whose system user logs in with a password: the callout
// Secret's switchboard-system (AuthCallout, one shared account) or the
// system Secret (IncludeFile with spec.usage.systemUser).
std::optional<UsageTarget> PasswordTargetOf(const ReconcileContext& ctx, const nlohmann::json& obj,
                                            const api::NatsServerView& sv, CachedInputs& cached,
                                            const std::string& ca_file) {
  auto password = SystemPassword(ctx, sv);
  if (!password) return std::nullopt;
  UsageTarget t;
  if (sv.auth_callout()) {
    auto directory = logic::CollectDirectory(obj, cached.backends(), cached.Lookup());
    if (!directory.ok()) return std::nullopt;
    t.directory = logic::UsageDirectoryOf(*directory);
    t.account = sv.callout_account();
  } else {
    auto collected = logic::CollectInstallations(obj, cached.backends(), cached.Lookup());
    if (!collected.ok()) return std::nullopt;
    t.directory = logic::UsageDirectoryOf(collected->input);
    // The shared account of an IncludeFile server is the global one.
    t.statz = t.directory.isolation == logic::Isolation::kAccounts;
    t.account = t.statz ? "" : "$G";
  }
  t.connection.urls = sv.url();
  t.connection.username = std::string(api::kCalloutSystemUsername);
  t.connection.password = *password;
  t.connection.ca_file = ca_file;
  t.fingerprint = sv.url() + "|" + ca_file + "|" + logic::ConfigHash(*password);
  return t;
}

// An AuthCallout server in NATS operator mode: the system user logs in
// with its user JWT (the keys in the callout Secret), every account's
// connections are listed, and each installation is its derived account.
// nullopt while the keys cannot be read.
std::optional<UsageTarget> OperatorModeTargetOf(const ReconcileContext& ctx,
                                                const nlohmann::json& obj,
                                                const api::NatsServerView& sv, CachedInputs& cached,
                                                const std::string& ca_file,
                                                logic::InstallationAccountCache* account_keys,
                                                std::set<std::string, std::less<>>& signing_keys) {
  kube::ObjectPtr secret = ctx.secrets->Get(sv.ns(), sv.callout_secret_name());
  if (!secret) return std::nullopt;
  auto data = logic::DecodeSecretData(*secret);
  if (!data.ok()) return std::nullopt;
  auto callout = logic::DecodeCalloutKeys(*data);
  auto seeds = logic::DecodeOperatorModeSeeds(*data);
  if (!callout.ok() || !seeds.ok()) return std::nullopt;
  auto keys = logic::DecodeOperatorModeKeyPairs(*seeds, callout->issuer_seed);
  if (!keys.ok()) return std::nullopt;
  auto directory = logic::CollectDirectory(obj, cached.backends(), cached.Lookup());
  if (!directory.ok()) return std::nullopt;
  // The limits of the installations in the directory (as the account
  // syncs push them: InstallationLimitsOf).
  std::map<std::string, const nlohmann::json*> backend_by_key;
  for (const nlohmann::json* b : cached.backends()) {
    backend_by_key[api::NamespaceOf(*b) + "/" + api::NameOf(*b)] = b;
  }
  std::map<std::string, logic::InstallationLimits, std::less<>> limits;
  for (const auto& [user, entry] : directory->by_user) {
    const std::string key = entry.ns() + "/" + entry.name();
    if (auto b = backend_by_key.find(key); b != backend_by_key.end()) {
      limits.emplace(key, logic::InstallationLimitsOf(api::BackendView(*b->second), sv));
    }
  }
  signing_keys.insert(keys->installation_signing.public_key());
  auto usage = logic::OperatorModeUsageDirectoryOf(*directory, keys->installation_signing, limits,
                                                   account_keys);
  if (!usage.ok()) return std::nullopt;
  auto connection = OperatorModeSystemConnection(sv.url(), ca_file, *keys,
                                                 static_cast<int64_t>(std::time(nullptr)));
  if (!connection.ok()) return std::nullopt;
  UsageTarget t;
  t.directory = std::move(usage).value();
  t.connection = std::move(connection).value();
  t.account = "";  // every account's connections
  t.statz = true;
  // Public keys only: the JWT is issued anew each round.
  t.fingerprint = sv.url() + "|" + ca_file + "|" + keys->system_account.public_key() + "|" +
                  keys->system_user.public_key();
  return t;
}

}  // namespace

std::vector<UsageTarget> UsageTargetsOf(const ReconcileContext& ctx,
                                        logic::InstallationAccountCache* account_keys) {
  std::vector<UsageTarget> out;
  CachedInputs cached(ctx);
  std::set<std::string, std::less<>> signing_keys;
  for (const kube::ObjectPtr& obj : ctx.servers->List()) {
    const api::NatsServerView sv(*obj);
    if (api::IsDeleting(*obj)) continue;
    if (!sv.auth_callout() && !logic::UsageSystemUserOf(*obj)) continue;
    auto ca = ReadCa(ctx, sv);
    const std::string ca_file = ca.ok() ? CaFileOf(ctx, sv, *ca) : "";
    std::optional<UsageTarget> target;
    if (api::OperatorMode(sv)) {
      target = OperatorModeTargetOf(ctx, *obj, sv, cached, ca_file, account_keys, signing_keys);
    } else {
      target = PasswordTargetOf(ctx, *obj, sv, cached, ca_file);
    }
    if (!target) continue;
    target->key = sv.ns() + "/" + sv.name();
    target->connection.name = "switchboard-operator-usage";
    target->connection.connect_timeout = ctx.probe_timeout;
    out.push_back(std::move(*target));
  }
  if (account_keys) account_keys->Retain(signing_keys);
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
