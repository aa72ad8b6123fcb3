#include "callout_provisioner.h"

#include <optional>

#include "authorizer_checks.h"
#include "backend_step.h"
#include "secret_cache.h"
#include "switchboard/api/constants.h"
#include "switchboard/common/log.h"
#include "switchboard/operator_logic/callout.h"
#include "switchboard/operator_logic/callout_status.h"
#include "switchboard/operator_logic/cluster_render.h"
#include "switchboard/operator_logic/conditions.h"
#include "switchboard/operator_logic/objects.h"
#include "switchboard/operator_logic/retry_timing.h"
#include "switchboard/operator_logic/secrets.h"

namespace switchboard::operator_controller {
namespace logic = ::switchboard::operator_logic;
namespace reasons = ::switchboard::operator_logic::reasons;

namespace {

constexpr std::string_view kCalloutSecretField = "spec.provisioning.authCallout.secretName";
constexpr std::string_view kConfigSecretField = "spec.config.secretName";

// What every status of this reconcile starts from: the stored count stays
// until the directory is collected.
logic::CalloutServerStatusInput InputOf(const ServerCall& call) {
  logic::CalloutServerStatusInput in;
  in.generation = call.generation;
  in.account = call.view.callout_account();
  in.installations = StatusOf(call.obj).value("installations", 0);
  return in;
}

ServerReport ReportOf(const ServerCall& call, const logic::CalloutServerStatusInput& in) {
  const json previous = StatusOf(call.obj);
  ServerReport report{logic::ComputeCalloutServerStatus(previous, in, call.now), {}};
  report.events = {logic::ReadyTransitionEvent(previous, report.status),
                   logic::AuthorizerAvailableEvent(previous, report.status)};
  return report;
}

}  // namespace

std::string_view CalloutProvisioner::mode() const { return api::kProvisioningAuthCallout; }

std::optional<Action> CalloutProvisioner::Defer(const ServerCall& call) {
  return spacing_.Defer(call, ctx_.callout_status_interval);
}

ServerReport CalloutProvisioner::Refused(const ServerCall& call, std::string_view reason,
                                         const std::string& message) const {
  logic::CalloutServerStatusInput in = InputOf(call);
  in.failure_reason = std::string(reason);
  in.failure_message = message;
  return ReportOf(call, in);
}

Result<Action> CalloutProvisioner::Provision(const ServerCall& call) {
  const std::string& key = call.key;
  const api::NatsServerView& sv = call.view;
  logic::CalloutServerStatusInput in = InputOf(call);
  auto report = [&](Action action) -> Result<Action> {
    if (in.authorizers && ctx_.metrics) {
      ctx_.metrics->SetAuthorizers(sv.ns(), sv.name(), in.authorizers->authorizers,
                                   in.authorizers->servers);
    }
    SB_RETURN_IF_ERROR(WriteServerReport(call, ReportOf(call, in)));
    return action;
  };
  auto fail = [&](std::string_view reason, const std::string& msg, Action action) {
    in.failure_reason = std::string(reason);
    in.failure_message = msg;
    return report(action);
  };

  // 1. The keys. What is stored and valid stays (the issuer above all: the
  //    servers' static config names it and cannot reload it). Someone
  //    else's Secret of that name is never read.
  const std::string callout_name = sv.callout_secret_name();
  auto read = ReadCalloutKeys(call, kCalloutSecretField);
  if (!read.ok()) return read.status();
  if (!read->failure_reason.empty()) {
    return fail(read->failure_reason, read->failure_message, Action::AwaitChange());
  }
  kube::ObjectPtr stored_secret = read->stored_secret;
  const Result<std::string>& ca = read->ca;
  const logic::CalloutKeysPlan& plan = read->plan;
  json callout_secret = logic::CalloutSecret({sv.ns(), sv.name(), call.uid}, callout_name,
                                             logic::EncodeCalloutKeys(plan.keys));
  auto wrote = WriteServerSecret(call, callout_secret, stored_secret.get(), kCalloutSecretField);
  if (!wrote.ok()) return wrote.status();
  if (!wrote->conflict.empty()) {
    return fail(reasons::kSecretConflict, wrote->conflict, Action::AwaitChange());
  }
  if (wrote->wrote) {
    log::Info("server", "callout keys written",
              {{"key", key}, {"secret", callout_name}, {"note", plan.note}});
  }
  in.issuer = plan.keys.issuer;

  // 2. The directory's size (the authorizer builds the same from its caches).
  CachedInputs cached(ctx_);
  auto directory = logic::CollectDirectory(call.obj, cached.backends(), cached.Lookup());
  if (!directory.ok()) {
    return fail(reasons::kInvalidSpec, directory.status().message(), Action::Terminal());
  }
  in.installations = static_cast<int>(directory->by_user.size());

  // 3. The static config, in the config Secret.
  logic::CalloutConfigInput ci;
  ci.server_ns = sv.ns();
  ci.server_name = sv.name();
  auto max_payload = sv.max_payload();
  if (!max_payload) {
    return fail(reasons::kInvalidSpec,
                "spec.maxPayload: not a byte quantity; use e.g. 16Mi or 16777216",
                Action::Terminal());
  }
  ci.max_payload = *max_payload;
  ci.account = sv.callout_account();
  ci.issuer = plan.keys.issuer;
  ci.authorizer_bcrypt = plan.keys.authorizer.bcrypt;
  ci.system_bcrypt = plan.keys.system.bcrypt;
  auto text = logic::RenderCalloutConfig(ci);
  if (!text.ok()) return fail(reasons::kInvalidSpec, text.status().message(), Action::Terminal());
  logic::RenderedConfig rendered;
  rendered.text = std::move(text).value();
  rendered.hash = logic::ConfigHash(rendered.text);
  rendered.installations = in.installations;
  const std::string secret_name = sv.config_secret_name();
  kube::ObjectPtr current = ctx_.secrets->Get(sv.ns(), secret_name);
  json desired =
      logic::ConfigSecret({sv.ns(), sv.name(), call.uid}, secret_name, sv.config_key(), rendered);
  auto w = WriteServerSecret(call, desired, current.get(), kConfigSecretField);
  if (!w.ok()) return w.status();
  if (!w->conflict.empty())
    return fail(reasons::kSecretConflict, w->conflict, Action::AwaitChange());
  if (w->wrote) {
    log::Info("server", "callout config written",
              {{"key", key}, {"secret", secret_name}, {"hash", rendered.hash}});
  }
  in.config_hash = rendered.hash;
  // Not a watched Secret (it has no managed-by label): looked at again soon.
  if (!ca.ok()) {
    const auto timing = logic::RetryTimingFor({ctx_.probe_interval, ctx_.authorizer_recheck});
    return fail(reasons::kCaSecretUnusable, ca.status().message(),
                Action::RequeueAfter(timing.server_ca_retry));
  }

  // 4. Authorizers: the last answer taken for these keys and URLs, if any;
  //    a new question when there is none or it is older than the recheck.
  Action next = Action::RequeueAfter(ctx_.authorizer_recheck);
  if (ctx_.authorizer_checks) {
    const std::string ca_file = CaFileOf(ctx_, sv, *ca);
    const std::string fingerprint =
        sv.url() + "|" + ca_file + "|" + plan.keys.system.bcrypt + "|" + plan.keys.issuer;
    auto last = ctx_.authorizer_checks->Latest(key);
    if (last && last->fingerprint != fingerprint) last.reset();
    auto age = last ? std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - last->at)
                    : ctx_.authorizer_recheck;
    if (last) in.authorizers = logic::DecideAuthorizerAvailability(last->replies);
    if (age >= ctx_.authorizer_recheck) {
      PingRequest g;
      g.connection.urls = sv.url();
      g.connection.username = std::string(api::kCalloutSystemUsername);
      g.connection.password = plan.keys.system.password;
      g.connection.ca_file = ca_file;
      g.connection.name = "switchboard-operator";
      g.connection.connect_timeout = ctx_.probe_timeout;
      g.subject = std::string(logic::kAuthorizerPingSubject);
      g.body = logic::AuthorizerPingBody();
      g.window = ctx_.authorizer_window;
      // Done: this server is enqueued again and reads the answer.
      ctx_.authorizer_checks->Submit(key, fingerprint, std::move(g));
    } else {
      next = Action::RequeueAfter(ctx_.authorizer_recheck - age);
    }
  }
  return report(next);
}

void CalloutProvisioner::Forget(const std::string& key) {
  spacing_.Forget(key);
  if (ctx_.authorizer_checks) ctx_.authorizer_checks->Forget(key);
  if (const auto slash = key.find('/'); ctx_.metrics && slash != std::string::npos) {
    ctx_.metrics->ForgetAuthorizers(key.substr(0, slash), key.substr(slash + 1));
  }
}

}  // namespace switchboard::operator_controller
