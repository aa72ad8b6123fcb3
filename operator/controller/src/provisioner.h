// A NatsServer's reconcile is one prologue (server_reconciler.cc) and one
// provisioner: the one of the server's spec.provisioning.mode. The prologue
// reads the server, judges it against the rules' full context (what the
// webhook judges it against) and reports InvalidSpec; only a valid server
// reaches its provisioner, which writes what its mode needs (Secrets, the
// status) through the helpers below, so every mode reports a Secret it may
// not write, and its status, alike. A new mode is a new Provisioner, not a
// branch in the prologue.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "k8s_util.h"
#include "switchboard/api/views.h"
#include "switchboard/operator_controller/reconcilers.h"
#include "switchboard/operator_logic/callout.h"
#include "switchboard/operator_logic/cluster_render.h"
#include "switchboard/operator_logic/conditions.h"
#include "switchboard/operator_logic/secrets.h"

namespace switchboard::operator_controller {

// One reconcile of one NatsServer, as the prologue found it. Lives for the
// reconcile; `obj` is the cached object (kept alive by the prologue).
struct ServerCall {
  const ReconcileContext& ctx;
  const std::string& key;  // "<ns>/<name>"
  const json& obj;
  api::NatsServerView view;
  int64_t generation = 0;
  std::string uid;
  std::string now;  // RFC 3339: every condition this reconcile writes carries it
};

// A status to write and the events its transitions announce.
struct ServerReport {
  json status;
  std::vector<std::optional<operator_logic::StatusEvent>> events;
};

class Provisioner {
 public:
  virtual ~Provisioner() = default;

  // The spec.provisioning.mode this provisioner serves.
  virtual std::string_view mode() const = 0;
  // Whether it serves `server`: by default every server of its mode. A
  // variant of a mode (AuthCallout with isolation: Accounts) narrows this
  // and is asked before the mode's general provisioner.
  virtual bool Serves(const api::NatsServerView& server) const;

  // Asked before the prologue judges the server (which reads every backend
  // bound to it): the Action that puts this reconcile off, or nullopt to go
  // on. For modes whose reconciles must be spaced; the default never defers.
  virtual std::optional<Action> Defer(const ServerCall& call);

  // The report of a server this mode does not provision: Ready=False with
  // `reason` and `message`, the rest of the status as this mode keeps it.
  virtual ServerReport Refused(const ServerCall& call, std::string_view reason,
                               const std::string& message) const = 0;

  // Provisions a server the prologue found valid: writes what this mode
  // needs and the status. Errors are retried by the controller.
  virtual Result<Action> Provision(const ServerCall& call) = 0;

  // The server is now served by another provisioner: what this mode left
  // (status parts, gauges, verdicts that held backends back) goes. Called
  // on every reconcile of a server in another mode, so it must be cheap
  // and idempotent.
  virtual void Retire(const std::string& key) = 0;

  // The server is gone: everything this provisioner keeps for it goes.
  virtual void Forget(const std::string& key) = 0;
};

// Writes `report`: the status when it differs from the stored one, and its
// events once that write stored them (WriteStatusAndAnnounce).
Status WriteServerReport(const ServerCall& call, const ServerReport& report);

// A Secret this server owns (`desired`, built by operator_logic), written
// against `cached` (from the owned-Secrets cache; may be null).
struct OwnedSecretWrite {
  bool wrote = false;
  // Not empty when a Secret of that name is someone else's: nothing was
  // written, and this is the SecretConflict message, naming the Secret and
  // the spec field that picks another name.
  std::string conflict;
};
Result<OwnedSecretWrite> WriteServerSecret(const ServerCall& call, const json& desired,
                                           const json* cached, std::string_view name_field);
// The SecretConflict message when `cached` (may be null) is a Secret of
// that name that this server does not own; "" when it is ours or absent.
std::string ForeignSecretConflict(const ServerCall& call, const json* cached,
                                  std::string_view name_field);

// The callout keys as both AuthCallout provisioners read them: the stored
// callout Secret (never read when someone else owns it), its data
// (undecodable data counts as empty: the plan then generates what is
// missing, as for a Secret someone emptied), the CA of spec.tls.caSecretRef
// (copied into the callout Secret for the authorizer; while it cannot be
// read the stored copy stays) and the plan of the callout keys over them
// (what is stored and valid stays: the servers' static config names the
// issuer and cannot reload it).
struct CalloutKeysRead {
  kube::ObjectPtr stored_secret;  // null when there is none
  std::optional<operator_logic::SecretData> stored;
  // The CA's PEM; kNotFound or kFailedPrecondition when it cannot be read
  // (the caller reports CaSecretUnusable once the rest is written).
  Result<std::string> ca = Status::NotFound("");
  operator_logic::CalloutKeysPlan plan;
  // Not empty when the keys cannot be planned: SecretConflict (someone
  // else's Secret of that name) or InvalidSpec, with the message to report.
  std::string failure_reason, failure_message;
};
// Errors are those of reading the CA (retried by the controller).
Result<CalloutKeysRead> ReadCalloutKeys(const ServerCall& call, std::string_view name_field);

// Spaces a server's reconciles while its generation stays the same: at
// least `interval` apart; a wake-up inside the interval is deferred to its
// end (RequeueAfter), never dropped; a spec change goes through at once.
// Thread-safe.
class ReconcileSpacing {
 public:
  std::optional<Action> Defer(const ServerCall& call, std::chrono::milliseconds interval);
  // The reconcile Defer let through has ended: what it took is LastTook.
  void Finished(const std::string& key);
  // What the key's last finished reconcile took (from Defer to Finished);
  // 0 before the first.
  std::chrono::milliseconds LastTook(const std::string& key);
  void Forget(const std::string& key);

 private:
  struct Run {
    std::chrono::steady_clock::time_point at;
    int64_t generation = 0;
    std::chrono::milliseconds took{0};
  };
  std::mutex mu_;
  std::map<std::string, Run> last_run_;  // by server key; guarded by mu_
};

// What a collect over the caches reads: every backend, and the Secrets
// looked up by name. A looked-up Secret is built from its cached record
// (SecretCache::Get) and kept until the next lookup, as SecretLookup's
// contract allows: a render of 1,000 installations never holds 1,000
// Secrets as DOMs at once.
class CachedInputs {
 public:
  explicit CachedInputs(const ReconcileContext& ctx);
  const std::vector<const json*>& backends() const { return backends_; }
  operator_logic::SecretLookup Lookup();

 private:
  const ReconcileContext& ctx_;
  std::vector<kube::ObjectPtr> held_;
  std::vector<const json*> backends_;
  kube::ObjectPtr secret_held_;  // the last looked-up Secret
};

}  // namespace switchboard::operator_controller
