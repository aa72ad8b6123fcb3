// The two reconcilers of switchboard-operator: thin steps around
// operator/logic, the only decision core. Each step reads (informer caches:
// PubSubBackends, NatsServers, and the Secrets labelled
// app.kubernetes.io/managed-by=switchboard; a Secret a user references is
// read by name), decides (pure logic: PlanCredentials, CollectInstallations +
// RenderNatsConfig, DecideInFile, DecideProbe, ComputeBackendStatus,
// ReadyTransitionEvent), applies (writes only what changed) and reports
// (status and events only on change). Neither puts a password into a log
// line, an event or a status.
//
// PubSubBackend (BackendReconciler::Reconcile), per key:
//   being deleted -> finalizer: wait until the server's config Secret no
//                    longer holds its users (the render leaves deleting
//                    backends out), delete its Secrets, drop the finalizer.
//                    Bounded: ServerGone, ConfigTargetMissing, or
//                    CleanupTimedOut after 60 s, each with a Warning event.
//   finalizer     -> pubsub.switchboard.dev/cleanup (the old
//                    pubsub.switchboard.dev/finalizer is replaced)
//   resolve       -> ServerNotFound, NamespaceNotAllowed
//   validate      -> InvalidSpec (shared rules); Terminal
//   nats          -> credentials (PlanCredentials on the stored state),
//                    env Secret (SecretConflict when its name is taken: the
//                    credentials Secret is marked so the render leaves the
//                    user out), the user in the config Secret
//                    (ConfigNotReloaded until the server reconciler wrote
//                    it; RenderRejected or ConfigFull when its render left
//                    the user out), probe on the ProbePool; Ready only when
//                    it passed
//   rabbitmq / postgres -> env Secret only; Ready=True EnvSecretWritten
//
// NatsServer (ServerReconciler::Reconcile), per key: one prologue, then
// the provisioner of its spec.provisioning.mode (src/provisioner.h).
//   gone          -> every provisioner forgets it; its backends look again
//   defer         -> the provisioner may space its reconciles
//   retire        -> the other modes drop what they left (status parts,
//                    gauges, render verdicts)
//   validate      -> InvalidSpec (shared rules, full context); Terminal
//   provision     -> IncludeFile: CollectInstallations, RenderNatsConfig
//                    into the config Secret, status with ConfigFits
//                    (include_file_provisioner.h); AuthCallout: the
//                    callout Secret's keys, the static config,
//                    AuthorizerAvailable (callout_provisioner.h). Both
//                    write their Secrets through one helper: a Secret of
//                    that name someone else owns is SecretConflict.
// Level-based: no memory of which backends reported; any replica writes
// the same bytes.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "switchboard/common/status.h"
#include "switchboard/kube/client.h"
#include "switchboard/kube/event_recorder.h"
#include "switchboard/kube/multi_store.h"
#include "switchboard/operator_controller/controller.h"
#include "switchboard/operator_controller/metrics.h"

namespace switchboard::operator_controller {

class ProbePool;
class AuthorizerChecks;
class AccountSyncs;
class ConfigIndex;
class CredentialSightings;
class Provisioner;
class RecentWrites;
class SecretCache;
}  // namespace switchboard::operator_controller
namespace switchboard::rules {
class ContextCache;
}  // namespace switchboard::rules
namespace switchboard::api {
class NatsServerView;
}  // namespace switchboard::api
namespace switchboard::operator_controller {

// What both reconcilers share. Pointers are not owned and outlive them.
struct ReconcileContext {
  kube::Client* client = nullptr;
  kube::MultiStore* backends = nullptr;
  kube::MultiStore* servers = nullptr;
  SecretCache* secrets = nullptr;  // label-selected: managed-by=switchboard (secret_cache.h)
  ProbePool* probes = nullptr;
  AuthorizerChecks* authorizer_checks = nullptr;  // may be null: AuthorizerAvailable not checked
  // AuthCallout with isolation: Accounts; may be null: accounts not pushed.
  AccountSyncs* account_syncs = nullptr;
  ConfigIndex* configs = nullptr;
  CredentialSightings* credential_sightings = nullptr;  // AuthCallout's probes
  // What the shared rules judge an object against (rules_context.h).
  rules::ContextCache* rules_context = nullptr;
  RecentWrites* recent = nullptr;           // may be null
  kube::EventRecorder* recorder = nullptr;  // may be null
  Metrics* metrics = nullptr;               // may be null
  std::function<void(const std::string&)> enqueue_server;
  std::function<void(const std::string&)> enqueue_backend;
  std::chrono::milliseconds probe_timeout{5000};
  std::chrono::milliseconds probe_interval{300000};
  // How long after a user first appeared in the config Secret a refused
  // probe still means "not loaded yet" rather than "wrong credentials", when
  // no reloader reports the load: the kubelet syncs a changed Secret into a
  // pod's volume within about a minute, then the reloader signals.
  std::chrono::milliseconds reload_window{120000};
  // How long a reloader's report that stays behind is believed
  // (operator_logic::ConfigLoadFacts::patience).
  std::chrono::milliseconds report_patience{30000};
  // Config Secret writes per server are at least this far apart: every
  // write makes the NATS servers reload, and a burst of new backends must
  // not become a burst of reloads.
  std::chrono::milliseconds min_write_interval{1000};
  // An AuthCallout server's reconciles, when only what its backends hold
  // changed (its generation did not), are at least this far apart: each
  // collects the whole directory (O(N)) for the installations count in its
  // status, and every new backend, credentials and env Secret wakes it.
  // Nothing a backend needs waits on it (the authorizers serve new users
  // from their own caches); a wake-up inside the interval is deferred to
  // its end, never dropped.
  std::chrono::milliseconds callout_status_interval{1000};
  // A finalizer waits this long for a render without its users.
  std::chrono::milliseconds cleanup_timeout{60000};
  std::string ca_dir;  // where NatsServer CA bundles are written for probes
  // AuthCallout mode: how often a NatsServer asks its NATS servers whether
  // an authorizer is subscribed, and how long it collects their answers.
  // (The retry and wait timings of probes and unreadable CAs follow from
  // these and probe_interval: operator_logic::RetryTimingFor.)
  std::chrono::milliseconds authorizer_recheck{30000};
  std::chrono::milliseconds authorizer_window{1000};
};

class BackendReconciler : public Reconciler {
 public:
  explicit BackendReconciler(ReconcileContext ctx) : ctx_(std::move(ctx)) {}
  Result<Action> Reconcile(const std::string& key) override;

 private:
  struct Impl;
  ReconcileContext ctx_;
};

class ServerReconciler : public Reconciler {
 public:
  explicit ServerReconciler(ReconcileContext ctx);
  ~ServerReconciler() override;
  Result<Action> Reconcile(const std::string& key) override;

 private:
  // The provisioner of `server`'s mode; the default mode's when none serves it.
  Provisioner& ProvisionerOf(const api::NatsServerView& server);
  ReconcileContext ctx_;
  std::vector<std::unique_ptr<Provisioner>> provisioners_;  // the first: the default mode's
};

}  // namespace switchboard::operator_controller
