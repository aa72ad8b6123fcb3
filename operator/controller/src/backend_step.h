// One PubSubBackend reconcile, split by step (see reconcilers.h):
//   read     backend_read.cc      typed views of the caches and the Secrets a
//                                 user references; no decisions, no writes
//   decide   operator/logic       PlanCredentials, ComputeBackendStatus, ...
//   apply    backend_apply.cc     the writes: finalizers, owned Secrets
//   report   backend_report.cc    status and events, only when they change
//   probe    backend_probe.cc     the live probe on the ProbePool
// and the flows that chain them: backend_nats.cc, backend_env_kinds.cc
// (rabbitmq, postgres), backend_finalize.cc. Private to the controller.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "k8s_util.h"
#include "secret_record.h"
#include "switchboard/api/views.h"
#include "switchboard/operator_controller/reconcilers.h"
#include "switchboard/operator_logic/backend_policy.h"
#include "switchboard/operator_logic/cluster_render.h"
#include "switchboard/operator_logic/conditions.h"
#include "switchboard/operator_logic/retry_timing.h"
#include "switchboard/operator_logic/rotation.h"
#include "switchboard/operator_logic/secrets.h"
#include "switchboard/rules/validate.h"

namespace switchboard::operator_controller {

// The finalizer name of the older layout; replaced on sight.
inline constexpr std::string_view kLegacyFinalizer = "pubsub.switchboard.dev/finalizer";

// What a read found that the backend's status reports (as opposed to an API
// error, which the controller retries with backoff).
struct Finding {
  operator_logic::Step step;
  std::string_view reason;
  std::string message;
  Action action;
};
template <typename T>
using Found = std::variant<T, Finding>;

// How long until `t`, at least 100 ms (a requeue delay).
std::chrono::milliseconds Until(operator_logic::Time t);

// ---- read (backend_read.cc) ----

// The owned credentials Secret of a backend, from the cache.
struct StoredCredentials {
  kube::ObjectPtr secret;  // null when absent
  std::optional<operator_logic::CredentialState> state;
  bool marked_conflict = false;  // annotated SecretConflict (left out of the render)
};
// A Secret with that name owned by someone else is SecretConflict; an
// undecodable one is CredentialsNotFound.
Found<StoredCredentials> ReadStoredCredentials(const ReconcileContext& ctx,
                                               const api::BackendView& view,
                                               const std::string& uid);

// PlanCredentials' inputs: spec, annotations, the user's password Secret
// (read by name: it is not ours, so not cached) and the env Secret's user.
Result<Found<operator_logic::CredentialInputs>> ReadCredentialInputs(const ReconcileContext& ctx,
                                                                     const json& obj,
                                                                     const api::BackendView& view,
                                                                     const std::string& uid);

// One key of a Secret read by name (null-safe): nullopt when the Secret or
// the key is absent.
Result<std::optional<std::string>> ReadSecretKey(const ReconcileContext& ctx, const std::string& ns,
                                                 const std::string& name, const std::string& key);

// The PEM bundle of a server's spec.tls.caSecretRef, read and judged by
// operator_logic::DecideCalloutCa ("" when the server names none). Errors:
// NotFound (the Secret or key is missing) or FailedPrecondition (not a PEM
// CA bundle), with the decision's message (names the field and the fix).
Result<std::string> ReadCa(const ReconcileContext& ctx, const api::NatsServerView& server);
// `pem` as the file nats.c loads for this server ("" when pem is "").
std::string CaFileOf(const ReconcileContext& ctx, const api::NatsServerView& server,
                     const std::string& pem);
// Both: the probe's CA file for a server ("" when it names no CA).
Result<std::string> CaFile(const ReconcileContext& ctx, const api::NatsServerView& server);

// How a backend's user reaches `server`: through its rendered include file,
// or, in AuthCallout mode with either isolation, through its authorizers
// (with `timing`'s sync window). The backend flows (NATS, probe, finalizer)
// tell the two ways apart by this, not by the server's mode; the file's
// facts (ThroughFile) are the caller's to fill in.
operator_logic::UserPath UserPathOf(const api::NatsServerView& server,
                                    const operator_logic::RetryTiming& timing);

// Whether the server's config Secret holds these users (ConfigIndex).
bool ConfigHolds(const ReconcileContext& ctx, const SecretRecord* config_secret,
                 const api::NatsServerView& server, const std::string& username,
                 const std::string& bcrypt);

// ---- the reconcile ----

struct BackendReconciler::Impl {
  const ReconcileContext& ctx;
  const json& obj;
  api::BackendView view;
  std::string key;
  std::string uid;
  // What the status write is conditional on (WriteStatusAndAnnounce): the
  // version read, or the one this reconcile's own finalizer write made of
  // it while the spec stayed (EnsureFinalizer).
  std::string status_version;
  operator_logic::BackendStatusInput in;

  Impl(const ReconcileContext& c, const json& o);

  // report (backend_report.cc)
  void Event(bool warning, std::string_view reason, const std::string& message);
  // Status (and its event) from the steps so far; written only on change.
  Result<Action> Report(Action action);
  Result<Action> Fail(operator_logic::Step step, std::string_view reason,
                      const std::string& message, Action action);
  Result<Action> Fail(const Finding& f) { return Fail(f.step, f.reason, f.message, f.action); }
  void Passed(operator_logic::Step step, std::string message);
  Result<Action> Invalid(const rules::Report& report);
  Result<Action> EnvConflict();

  // apply (backend_apply.cc)
  Status EnsureFinalizer();
  Status RemoveFinalizers();
  // Env Secret with `env`; false (SecretConflict) when its name is taken.
  Result<bool> WriteEnv(const operator_logic::SecretData& env);
  Status WriteCredentials(const operator_logic::CredentialState& state, bool conflict,
                          const json* cached);

  // flows
  Result<Action> Rabbit();                                        // backend_env_kinds.cc
  Result<Action> Postgres();                                      // backend_env_kinds.cc
  Result<Action> EnvOnly(const operator_logic::SecretData& env);  // backend_env_kinds.cc
  Result<Action> Nats(const json& server_obj);                    // backend_nats.cc
  Result<Action> Finalize();                                      // backend_finalize.cc

  // What the probe step needs from the NATS flow.
  struct NatsProbe {
    const api::NatsServerView& server;
    const operator_logic::CredentialPlan& plan;
    const operator_logic::CredentialInputs& ci;
    const SecretRecord* config;  // the server's config Secret (null through the authorizers)
    const json* creds_secret;    // the cached credentials Secret (may be null)
    // UserPathOf the server; through the file, with user_in_config set.
    operator_logic::UserPath path;
    // The installation's effective maxConnections (InstallationLimitsOf);
    // nullopt: none applies.
    std::optional<int64_t> max_connections;
    std::chrono::milliseconds next_probe;
  };
  Result<Action> Probe(NatsProbe p);  // backend_probe.cc
};

}  // namespace switchboard::operator_controller
