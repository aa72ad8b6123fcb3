#include "operator_mode_provisioner.h"

#include <ctime>
#include <map>
#include <memory>
#include <vector>

#include "account_syncs.h"
#include "backend_step.h"
#include "config_index.h"
#include "operator_mode_connection.h"
#include "secret_cache.h"
#include "switchboard/api/constants.h"
#include "switchboard/api/metadata.h"
#include "switchboard/api/operator_mode.h"
#include "switchboard/common/log.h"
#include "switchboard/operator_logic/callout.h"
#include "switchboard/operator_logic/callout_status.h"
#include "switchboard/operator_logic/conditions.h"
#include "switchboard/operator_logic/limits.h"
#include "switchboard/operator_logic/objects.h"
#include "switchboard/operator_logic/operator_mode_claims.h"
#include "switchboard/operator_logic/operator_mode_config.h"
#include "switchboard/operator_logic/operator_mode_keys.h"
#include "switchboard/operator_logic/render.h"
#include "switchboard/operator_logic/retry_timing.h"
#include "switchboard/operator_logic/secrets.h"

namespace switchboard::operator_controller {
namespace logic = ::switchboard::operator_logic;
namespace reasons = ::switchboard::operator_logic::reasons;

namespace {

constexpr std::string_view kCalloutSecretField = "spec.provisioning.authCallout.secretName";
constexpr std::string_view kConfigSecretField = "spec.config.secretName";

int64_t UnixNow() { return static_cast<int64_t>(std::time(nullptr)); }

logic::CalloutServerStatusInput InputOf(const ServerCall& call) {
  logic::CalloutServerStatusInput in;
  in.generation = call.generation;
  in.account = "";  // one per installation: status.operatorMode says how many
  in.installations = StatusOf(call.obj).value("installations", 0);
  return in;
}

// What AuthCallout's status says, and status.operatorMode (nullopt: keep
// the stored one).
ServerReport ReportOf(const ServerCall& call, const logic::CalloutServerStatusInput& in,
                      const std::optional<json>& operator_mode) {
  const json previous = StatusOf(call.obj);
  ServerReport report{logic::ComputeCalloutServerStatus(previous, in, call.now), {}};
  if (operator_mode) {
    report.status["operatorMode"] = *operator_mode;
  } else if (previous.contains("operatorMode")) {
    report.status["operatorMode"] = previous["operatorMode"];
  }
  report.events = {logic::ReadyTransitionEvent(previous, report.status),
                   logic::AuthorizerAvailableEvent(previous, report.status)};
  return report;
}

}  // namespace

std::string_view OperatorModeProvisioner::mode() const { return api::kProvisioningAuthCallout; }

bool OperatorModeProvisioner::Serves(const api::NatsServerView& server) const {
  return api::OperatorMode(server);
}

std::optional<Action> OperatorModeProvisioner::Defer(const ServerCall& call) {
  // Spaced by what the last reconcile took, not a fixed interval: a new
  // installation's account reaches the servers (and their lookups) only
  // through this reconcile, so its backend's Ready waits on the spacing.
  return spacing_.Defer(call, logic::ServerReconcileSpacing(spacing_.LastTook(call.key),
                                                            ctx_.callout_status_interval));
}

ServerReport OperatorModeProvisioner::Refused(const ServerCall& call, std::string_view reason,
                                              const std::string& message) const {
  logic::CalloutServerStatusInput in = InputOf(call);
  in.failure_reason = std::string(reason);
  in.failure_message = message;
  return ReportOf(call, in, std::nullopt);
}

Result<Action> OperatorModeProvisioner::Provision(const ServerCall& call) {
  const std::string& key = call.key;
  struct Finish {
    ReconcileSpacing& spacing;
    const std::string& key;
    ~Finish() { spacing.Finished(key); }
  } finish{spacing_, key};
  const api::NatsServerView& sv = call.view;
  logic::CalloutServerStatusInput in = InputOf(call);
  std::optional<json> operator_mode;
  auto report = [&](Action action) -> Result<Action> {
    if (in.authorizers && ctx_.metrics) {
      ctx_.metrics->SetAuthorizers(sv.ns(), sv.name(), in.authorizers->authorizers,
                                   in.authorizers->servers);
    }
    SB_RETURN_IF_ERROR(WriteServerReport(call, ReportOf(call, in, operator_mode)));
    return action;
  };
  auto fail = [&](std::string_view reason, const std::string& msg, Action action) {
    in.failure_reason = std::string(reason);
    in.failure_message = msg;
    return report(action);
  };
  const auto timing = logic::RetryTimingFor({ctx_.probe_interval, ctx_.authorizer_recheck});

  // 1. The keys: the callout's and operator mode's, in one owned Secret.
  //    What is stored and valid stays (the static config names them).
  const std::string callout_name = sv.callout_secret_name();
  auto read = ReadCalloutKeys(call, kCalloutSecretField);
  if (!read.ok()) return read.status();
  if (!read->failure_reason.empty()) {
    return fail(read->failure_reason, read->failure_message, Action::AwaitChange());
  }
  kube::ObjectPtr stored_secret = read->stored_secret;
  const std::optional<logic::SecretData>& stored = read->stored;
  const Result<std::string>& ca = read->ca;
  const logic::CalloutKeysPlan& callout = read->plan;
  auto seeds = logic::PlanOperatorModeSeeds(stored, UnixNow());
  if (!seeds.ok()) {
    return fail(reasons::kInvalidSpec, seeds.status().message(), Action::AwaitChange());
  }
  logic::SecretData data = logic::EncodeCalloutKeys(callout.keys);
  data.merge(logic::EncodeOperatorModeSeeds(seeds->seeds));
  json keys_secret = logic::CalloutSecret({sv.ns(), sv.name(), call.uid}, callout_name, data);
  auto wrote = WriteServerSecret(call, keys_secret, stored_secret.get(), kCalloutSecretField);
  if (!wrote.ok()) return wrote.status();
  if (!wrote->conflict.empty()) {
    return fail(reasons::kSecretConflict, wrote->conflict, Action::AwaitChange());
  }
  if (wrote->wrote) {
    std::string note = callout.note;
    if (!seeds->note.empty()) note += (note.empty() ? "" : "; ") + seeds->note;
    log::Info("server", "operator-mode keys written",
              {{"key", key}, {"secret", callout_name}, {"note", note}});
  }
  auto pairs = logic::DecodeOperatorModeKeyPairs(seeds->seeds, callout.keys.issuer_seed);
  if (!pairs.ok()) return fail(reasons::kInvalidSpec, pairs.status().message(), Action::Terminal());
  const logic::OperatorModeKeys pub = pairs->Public();
  in.issuer = pub.auth_account;

  // 2. The static config.
  auto jwts = logic::EncodeOperatorModeJwts(*pairs);
  if (!jwts.ok()) return fail(reasons::kInvalidSpec, jwts.status().message(), Action::Terminal());
  logic::OperatorModeConfigInput ci;
  ci.server_ns = sv.ns();
  ci.server_name = sv.name();
  auto max_payload = sv.max_payload();
  if (!max_payload) {
    return fail(reasons::kInvalidSpec,
                "spec.maxPayload: not a byte quantity; use e.g. 16Mi or 16777216",
                Action::Terminal());
  }
  ci.max_payload = *max_payload;
  ci.operator_jwt = jwts->operator_jwt;
  ci.system_account_jwt = jwts->system_account_jwt;
  ci.auth_account_jwt = jwts->auth_account_jwt;
  ci.sentinel_jwt = jwts->sentinel_jwt;
  ci.resolver_dir = api::ResolverDirOf(sv);
  ci.now = UnixNow();
  auto text = logic::RenderOperatorModeConfig(ci);
  if (!text.ok()) return fail(reasons::kInvalidSpec, text.status().message(), Action::Terminal());

  // 3. The installations: the directory the authorizers build, each with
  //    its account.
  CachedInputs cached(ctx_);
  auto directory = logic::CollectDirectory(call.obj, cached.backends(), cached.Lookup());
  if (!directory.ok()) {
    return fail(reasons::kInvalidSpec, directory.status().message(), Action::Terminal());
  }
  in.installations = static_cast<int>(directory->by_user.size());
  std::map<std::string, const json*> backend_by_key;
  for (const json* b : cached.backends()) {
    backend_by_key[api::NamespaceOf(*b) + "/" + api::NameOf(*b)] = b;
  }
  const int64_t now = UnixNow();
  DesiredAccounts desired;
  std::map<std::string, std::string> backend_of;  // account key -> "<ns>/<name>"
  std::vector<logic::Rejected> rejected;
  std::string content;
  for (const auto& [user, entry] : directory->by_user) {
    auto account =
        logic::InstallationAccountKey(pairs->installation_signing, entry.ns(), entry.name());
    if (!account.ok()) return account.status();
    logic::InstallationLimits limits;
    if (auto b = backend_by_key.find(entry.ns() + "/" + entry.name()); b != backend_by_key.end()) {
      limits = logic::InstallationLimitsOf(api::BackendView(*b->second), sv);
    }
    auto claims = logic::InstallationAccountClaims(
        {entry.ns(), entry.name(), account->public_key(), limits}, pub, now);
    if (!claims.ok()) {
      // The rules refuse such limits; this installation's account waits,
      // and its backend says why (ConfigIndex verdict, read by its flow).
      logic::Rejected r;
      r.ns = entry.ns();
      r.name = entry.name();
      r.field = "spec.nats.limits";
      r.message = claims.status().message();
      r.reason = reasons::kAccountRejected;
      rejected.push_back(std::move(r));
      continue;
    }
    content += AccountContent(*claims) + "\n";
    backend_of[account->public_key()] = entry.ns() + "/" + entry.name();
    desired.emplace(account->public_key(), std::move(claims).value());
  }

  // Each backend whose verdict changed looks again; an unchanged verdict
  // wakes nobody and logs nothing.
  for (const auto& b : ctx_.configs->RecordRender(ConfigIndex::AccountsKey(key), rejected)) {
    std::string why = "account made again";
    for (const auto& r : rejected) {
      if (r.ns + "/" + r.name == b) why = r.ToString();
    }
    log::Info("server", "account verdict changed", {{"key", key}, {"backend", b}, {"why", why}});
    ctx_.enqueue_backend(b);
  }

  logic::RenderedConfig rendered;
  rendered.text = std::move(text).value();
  rendered.hash = logic::ConfigHash(rendered.text);
  rendered.installations = in.installations;
  const std::string secret_name = sv.config_secret_name();
  kube::ObjectPtr current = ctx_.secrets->Get(sv.ns(), secret_name);
  json desired_config =
      logic::ConfigSecret({sv.ns(), sv.name(), call.uid}, secret_name, sv.config_key(), rendered);
  auto w = WriteServerSecret(call, desired_config, current.get(), kConfigSecretField);
  if (!w.ok()) return w.status();
  if (!w->conflict.empty())
    return fail(reasons::kSecretConflict, w->conflict, Action::AwaitChange());
  if (w->wrote) {
    log::Info("server", "operator-mode config written",
              {{"key", key}, {"secret", secret_name}, {"hash", rendered.hash}});
  }
  in.config_hash = rendered.hash;
  operator_mode = json{{"operator", pub.operator_key},
                       {"systemAccount", pub.system_account},
                       {"installationSigningKey", pub.installation_signing_key},
                       {"accounts", static_cast<int>(desired.size())}};
  if (!ca.ok()) {
    return fail(reasons::kCaSecretUnusable, ca.status().message(),
                Action::RequeueAfter(timing.server_ca_retry));
  }
  if (!ctx_.account_syncs) return report(Action::AwaitChange());

  // 4. The resolvers, and the authorizers, on the sync's thread: the last
  //    run for what is desired now, if any; a new one when there is none,
  //    it failed and its retry is due, or the resync is due.
  const std::string ca_file = CaFileOf(ctx_, sv, *ca);
  const std::string fingerprint =
      logic::ConfigHash(sv.url() + "|" + ca_file + "|" + pub.operator_key + "|" +
                        pub.system_account + "|" + pub.auth_account + "\n" + content);
  auto last = ctx_.account_syncs->Latest(key);
  if (last && last->fingerprint != fingerprint) last.reset();
  const auto age = last ? std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - last->at)
                        : std::chrono::milliseconds::max();
  const auto due = last && last->status.ok() ? timing.account_resync : timing.account_sync_retry;
  Action next = Action::RequeueAfter(due);
  if (last) {
    in.authorizers = logic::DecideAuthorizerAvailability(last->authorizer_replies);
    (*operator_mode)["servers"] = last->servers;
  }
  if (!last || age >= due) {
    AccountSyncJob job;
    job.server_key = key;
    job.fingerprint = fingerprint;
    auto connection = OperatorModeSystemConnection(sv.url(), ca_file, *pairs, now);
    if (!connection.ok()) return connection.status();
    job.connection = std::move(connection).value();
    job.connection.name = "switchboard-operator";
    job.connection.connect_timeout = ctx_.probe_timeout;
    job.lookups_connection = job.connection;
    job.lookups_connection.name = "switchboard-operator-lookups";
    job.lookups_connection.reconnect_wait = logic::timing::kAccountLookupsReconnect;
    job.lookups_fingerprint = logic::ConfigHash(sv.url() + "|" + ca_file + "|" + pub.operator_key +
                                                "|" + pub.system_account);
    job.operator_seed = seeds->seeds.operator_seed;
    job.desired = std::make_shared<const DesiredAccounts>(std::move(desired));
    job.keep = {pub.system_account, pub.auth_account};
    job.ping_subject = std::string(logic::kAuthorizerPingSubject);
    job.ping_body = logic::AuthorizerPingBody(pub.auth_account);
    job.window = ctx_.authorizer_window;
    job.request_timeout = ctx_.probe_timeout;
    // Done: this server is enqueued again and reads the outcome. The
    // installations whose account this adds write their env Secret now
    // (they wait for it: an engine's first connect finds its account).
    for (const auto& account : ctx_.account_syncs->Submit(key, std::move(job))) {
      if (auto b = backend_of.find(account); b != backend_of.end()) {
        ctx_.enqueue_backend(b->second);
      }
    }
  } else {
    next = Action::RequeueAfter(due - age);
  }
  if (last && !last->status.ok()) {
    return fail(
        reasons::kAccountSyncFailed,
        pubsub::IsNoNonceRefusal(last->status)
            ? logic::NotOnStaticConfigMessage(sv.ns() + "/" + secret_name, last->status.message())
            : last->status.message(),
        next);
  }
  return report(next);
}

void OperatorModeProvisioner::Retire(const std::string& key) {
  spacing_.Forget(key);
  // The verdicts no longer hold anyone back: their backends look again.
  for (const auto& b : ctx_.configs->RecordRender(ConfigIndex::AccountsKey(key), {})) {
    ctx_.enqueue_backend(b);
  }
  if (ctx_.account_syncs) ctx_.account_syncs->Forget(key);
}

void OperatorModeProvisioner::Forget(const std::string& key) {
  Retire(key);
  ctx_.configs->ForgetRender(ConfigIndex::AccountsKey(key));
  if (const auto slash = key.find('/'); ctx_.metrics && slash != std::string::npos) {
    ctx_.metrics->ForgetAuthorizers(key.substr(0, slash), key.substr(slash + 1));
  }
}

}  // namespace switchboard::operator_controller
