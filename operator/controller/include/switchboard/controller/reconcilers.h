// The two reconcilers of switchboard-operator. Both read objects from the
// informer caches, write through the API client and record events; neither
// ever puts a password into a log line, an event or a status.
//
// PubSubBackend (BackendReconciler::Reconcile), level-based, per key:
//   gone                   -> forget its users; re-render its server
//   being deleted          -> finalizer: remove the user, wait for a render
//                             without it, delete our Secrets, drop the
//                             finalizer. Bounded: when the NatsServer or its
//                             config Secret is gone (or after 60 s) the
//                             finalizer goes anyway, with a Warning event.
//   invalid (shared rules) -> Ready=False InvalidSpec + event; Terminal
//   nats                   -> server exists and admits the namespace;
//                             credentials (generated once, or from the
//                             referenced Secret; bcrypt once per password;
//                             staged rotation); users into the Registry;
//                             env Secret (owned; never overwrite another's:
//                             SecretConflict); once the server rendered the
//                             user: probe with these credentials; Ready only
//                             when it passes, else a reason and a requeue
//   rabbitmq / postgres    -> env Secret only; Ready=True EnvSecretWritten
//
// NatsServer (ServerReconciler::Reconcile): renders the include file from
// every backend the Registry holds for it (waiting until every bound backend
// has reported, so a restart never drops a user), writes its config Secret
// only when the bytes changed, and reports installations, configHash and
// conditions. After a write it wakes the backends waiting for it.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "switchboard/common/status.h"
#include "switchboard/controller/controller.h"
#include "switchboard/controller/metrics.h"
#include "switchboard/controller/multi_store.h"
#include "switchboard/controller/registry.h"
#include "switchboard/kube/client.h"
#include "switchboard/kube/event_recorder.h"

namespace switchboard::controller {

// What both reconcilers share. Pointers are not owned and outlive them.
struct ReconcileContext {
  kube::Client* client = nullptr;
  MultiStore* backends = nullptr;
  MultiStore* servers = nullptr;
  Registry* registry = nullptr;
  kube::EventRecorder* recorder = nullptr;  // may be null
  Metrics* metrics = nullptr;               // may be null
  std::function<void(const std::string&)> enqueue_server;
  std::function<void(const std::string&)> enqueue_backend;
  std::chrono::milliseconds probe_timeout{5000};
  std::chrono::milliseconds probe_interval{300000};
  // Retry of a failed probe while the server is expected to reload.
  std::chrono::milliseconds reload_retry{500};
  // How long after a config write a refused probe still means "not
  // reloaded yet" rather than "wrong credentials".
  std::chrono::milliseconds reload_window{30000};
  // Config Secret writes per server are at least this far apart: every
  // write makes the NATS servers reload, and a burst of new backends
  // (1,000 applied at once) must not become a burst of reloads.
  std::chrono::milliseconds min_write_interval{1000};
  std::string ca_dir;  // where NatsServer CA bundles are written for probes
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

class BackendReconciler : public Reconciler {
 public:
  explicit BackendReconciler(ReconcileContext ctx) : ctx_(std::move(ctx)) {}
  Result<Action> Reconcile(const std::string& key) override;

 private:
  struct Impl;
  friend struct Impl;
  ReconcileContext ctx_;
  struct ProbeMemo {
    std::string fingerprint;
    std::chrono::steady_clock::time_point at;
    int64_t max_payload = 0;
    std::string time;
  };
  std::mutex memo_mu_;
  std::map<std::string, ProbeMemo> probe_memo_;  // guarded by memo_mu_
  // Finalizing backends -> the server epoch that excludes them; guarded by memo_mu_.
  std::map<std::string, uint64_t> removal_epoch_;
};

class ServerReconciler : public Reconciler {
 public:
  explicit ServerReconciler(ReconcileContext ctx) : ctx_(std::move(ctx)) {}
  Result<Action> Reconcile(const std::string& key) override;

 private:
  ReconcileContext ctx_;
};

}  // namespace switchboard::controller
