#include "switchboard/operator_controller/operator.h"

#include <malloc.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

#include "authorizer_checks.h"
#include "config_index.h"
#include "k8s_util.h"
#include "probe_pool.h"
#include "secret_io.h"
#include "switchboard/api/views.h"
#include "switchboard/common/log.h"
#include "switchboard/kube/cache_shapes.h"
#include "switchboard/kube/client.h"
#include "switchboard/kube/event_recorder.h"
#include "switchboard/kube/multi_store.h"
#include "switchboard/kube/watcher.h"
#include "switchboard/operator_controller/controller.h"
#include "switchboard/operator_controller/health_server.h"
#include "switchboard/operator_controller/kube_lease_store.h"
#include "switchboard/operator_controller/leader_election.h"
#include "switchboard/operator_controller/metrics.h"
#include "switchboard/operator_controller/reconcilers.h"
#include "switchboard/operator_logic/objects.h"

namespace switchboard::operator_controller {
namespace {

constexpr const char* kLogger = "operator";
constexpr const char* kBackendKind = "PubSubBackend";
constexpr const char* kServerKind = "NatsServer";

std::string DefaultIdentity() {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  return std::string(host) + "_" + std::to_string(getpid());
}

// Metadata a reconcile reacts to besides the spec (generation). Not the
// finalizers: adding ours would wake the backend a second time for nothing
// (a deletion changes deletionTimestamp).
bool MetaChanged(const json& a, const json& b) {
  const json& ma = a["metadata"];
  const json& mb = b["metadata"];
  return GenerationOf(a) != GenerationOf(b) ||
         ma.value("annotations", json()) != mb.value("annotations", json()) ||
         ma.value("deletionTimestamp", json()) != mb.value("deletionTimestamp", json()) ||
         ma.value("labels", json()) != mb.value("labels", json());
}

// Whether a backend's next step depends on its server's config Secret.
bool WaitsForConfig(const json& backend) {
  if (IsDeleting(backend)) return true;
  const json status = StatusOf(backend);
  if (status.contains("rotation")) return true;
  for (const auto& c : status.value("conditions", json::array())) {
    if (c.is_object() && c.value("type", "") == "Ready") {
      return c.value("status", "") != "True" ||
             c.value("observedGeneration", int64_t{-1}) != GenerationOf(backend);
    }
  }
  return true;
}

}  // namespace

struct Operator::Impl {
  Options opts;  // set by the constructor, read-only after
  // Stop() may run in a signal handler: it only sets `stop` and writes
  // `stop_fd` (an eventfd, readable from then on), both async-signal-safe.
  // Run's waits poll the eventfd; the stop watcher relays it to the elector.
  std::atomic<bool> stop{false};
  int stop_fd = -1;  // created by the constructor, closed by the destructor
  std::atomic<bool> synced{false};

  Metrics metrics;  // synchronised internally
  // Written only by Run, each before the threads that read it start (the
  // health server's, the stop watcher), and read-only after that. The
  // health server is declared last so that it, and its thread reading the
  // elector, goes first.
  std::unique_ptr<kube::Client> client;
  std::unique_ptr<LeaderElector> elector;
  std::unique_ptr<HealthServer> health;

  void RequestStop() {
    stop = true;
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(stop_fd, &one, sizeof one);
  }
  // Returns after `d`, or at once when a stop was requested.
  void Wait(std::chrono::milliseconds d) {
    pollfd p{stop_fd, POLLIN, 0};
    [[maybe_unused]] int n = ::poll(&p, 1, static_cast<int>(d.count()));
  }

  Status Run();
};

Operator::Operator(Options options) : impl_(new Impl) {
  impl_->opts = std::move(options);
  impl_->stop_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}
Operator::~Operator() {
  if (impl_->stop_fd >= 0) ::close(impl_->stop_fd);
}

void Operator::Stop() { impl_->RequestStop(); }

Status Operator::Run() { return impl_->Run(); }

Status Operator::Impl::Run() {
  // Two malloc arenas rather than glibc's 8 per core: some 25 threads (probes,
  // workers, watchers, HTTP) would each fill and fragment an arena of their
  // own, for no gain at this allocation rate. Before any thread starts.
  mallopt(M_ARENA_MAX, 2);

  // 1. API access: --kubeconfig, else $KUBECONFIG, else in-cluster.
  auto config = kube::Config::Load(opts.kubeconfig);
  if (!config.ok()) return config.status().Annotate("kubeconfig");
  // The API server names the field manager of a create or merge patch after
  // the User-Agent (up to its first '/'): --field-manager is what every
  // write of the operator is recorded under in managedFields.
  config->user_agent = opts.field_manager;
  config->timeout = std::chrono::seconds(15);
  auto c = kube::Client::New(*config);
  if (!c.ok()) return c.status().Annotate("kube client");
  client = std::move(c).value();
  if (stop_fd < 0) return Status::Internal("eventfd for Stop() could not be created");

  // The elector exists before any thread that reads it (the health
  // server's, the stop watcher) starts.
  if (opts.leader_elect) {
    std::string ns = opts.lease_namespace;
    if (ns.empty()) {
      const char* pod_ns = std::getenv("POD_NAMESPACE");
      ns = pod_ns && *pod_ns ? pod_ns : config->default_namespace;
    }
    LeaderElectionConfig lc;
    lc.identity = opts.identity.empty() ? DefaultIdentity() : opts.identity;
    lc.lease_duration = opts.lease_duration;
    lc.renew_deadline = opts.renew_deadline;
    lc.retry_period = opts.retry_period;
    elector =
        std::make_unique<LeaderElector>(lc, NewKubeLeaseStore(client.get(), ns, opts.lease_name));
  }
  // Relays Stop() to the elector (whose Stop takes a lock); joined when Run
  // returns, whatever the path.
  std::thread stop_watcher([this] {
    pollfd p{stop_fd, POLLIN, 0};
    while (!stop) ::poll(&p, 1, -1);
    if (elector) elector->Stop();
  });
  struct JoinOnExit {
    Impl* impl;
    std::thread* t;
    ~JoinOnExit() {
      impl->RequestStop();
      t->join();
    }
  } join_watcher{this, &stop_watcher};

  // 2. Health and metrics first: they never depend on NATS or leadership.
  health = std::make_unique<HealthServer>([this]() -> std::string {
    if (opts.leader_elect && elector && !elector->IsLeader()) return "";  // a ready standby
    return synced ? "" : "caches not synced";
  });
  SB_RETURN_IF_ERROR(health->Start(opts.health_addr));
  SB_RETURN_IF_ERROR(metrics.Serve(opts.metrics_addr));

  // 3. Leadership.
  std::thread renewer;
  std::atomic<bool> lost{false};
  if (elector) {
    if (stop) return Status::Ok();
    if (!elector->AcquireBlocking()) return Status::Ok();  // stopped while standing by
    metrics.SetLeader(true);
    renewer = std::thread([&] {
      if (!elector->RenewLoop()) {
        lost = true;
        RequestStop();
      }
    });
  } else {
    metrics.SetLeader(true);
  }

  // 4. Caches, reconcilers, controllers. Secrets: only those labelled
  // managed-by=switchboard (the ones the operator writes, in today's and
  // earlier layouts); a Secret a user references is read by name.
  // Each cache keeps only what the reconcilers read (cache_shapes.h).
  kube::WatcherOptions wo;
  wo.transform = kube::CompactCustomObject;
  kube::MultiStore backends(client.get(), kube::resources::PubSubBackend(), opts.namespaces, wo);
  kube::MultiStore servers(client.get(), kube::resources::NatsServer(), opts.namespaces, wo);
  kube::WatcherOptions so = wo;
  so.label_selector = std::string(operator_logic::kManagedByLabel) + "=" +
                      std::string(operator_logic::kManagedByValue);
  so.transform = kube::CompactOwnedSecret;
  kube::MultiStore secrets(client.get(), kube::resources::Secret(), opts.namespaces, so);
  ConfigIndex configs;
  RecentWrites recent;
  kube::EventRecorder::Options ro;
  ro.component = "switchboard-operator";
  kube::EventRecorder recorder(client.get(), ro);

  std::string ca_dir = "/tmp/switchboard-operator-" + std::to_string(getpid());
  ::mkdir(ca_dir.c_str(), 0700);

  Controller* backend_ctl_ptr = nullptr;
  Controller* server_ctl_ptr = nullptr;
  ProbePool probes(
      opts.probe_workers,
      [&](const std::string& k) {
        if (backend_ctl_ptr) backend_ctl_ptr->Enqueue(k);
      },
      [&](const std::string& result) { metrics.ObserveProbe(result); });
  AuthorizerChecks authorizer_checks([&](const std::string& k) {
    if (server_ctl_ptr) server_ctl_ptr->Enqueue(k);
  });
  ReconcileContext rc;
  rc.authorizer_checks = &authorizer_checks;
  rc.client = client.get();
  rc.backends = &backends;
  rc.servers = &servers;
  rc.secrets = &secrets;
  rc.probes = &probes;
  rc.configs = &configs;
  rc.recent = &recent;
  rc.recorder = &recorder;
  rc.metrics = &metrics;
  rc.enqueue_server = [&](const std::string& k) { server_ctl_ptr->Enqueue(k); };
  rc.enqueue_backend = [&](const std::string& k) { backend_ctl_ptr->Enqueue(k); };
  rc.probe_timeout = opts.probe_timeout;
  rc.probe_interval = opts.probe_interval;
  rc.ca_dir = ca_dir;
  BackendReconciler backend_rec(rc);
  ServerReconciler server_rec(rc);
  Controller backend_ctl(kBackendKind, &backend_rec, &metrics, opts.workers);
  Controller server_ctl(kServerKind, &server_rec, &metrics, std::max(1, opts.workers / 2));
  backend_ctl_ptr = &backend_ctl;
  server_ctl_ptr = &server_ctl;

  auto server_of = [](const json& b) -> std::string {
    api::BackendView v(b);
    auto s = v.bound_server();
    return s ? s->ToString() : "";
  };
  // A backend change can change its server's file (bound, deleting, prefix,
  // moved to another server): both servers render again.
  backends.AddEventHandler({
      [&](const kube::ObjectPtr& o) {
        backend_ctl.Enqueue(kube::ObjectKeyOf(*o));
        if (auto s = server_of(*o); !s.empty()) server_ctl.Enqueue(s);
      },
      [&](const kube::ObjectPtr& a, const kube::ObjectPtr& b) {
        if (!MetaChanged(*a, *b)) return;
        backend_ctl.Enqueue(kube::ObjectKeyOf(*b));
        for (const auto& s : {server_of(*a), server_of(*b)}) {
          if (!s.empty()) server_ctl.Enqueue(s);
        }
      },
      [&](const kube::ObjectPtr& o) {
        backend_ctl.Enqueue(kube::ObjectKeyOf(*o));
        if (auto s = server_of(*o); !s.empty()) server_ctl.Enqueue(s);
      },
  });
  auto server_changed = [&](const json& s) {
    std::string key = kube::ObjectKeyOf(s);
    server_ctl.Enqueue(key);
    for (const auto& b : backends.List()) {
      if (server_of(*b) == key) backend_ctl.Enqueue(kube::ObjectKeyOf(*b));
    }
  };
  servers.AddEventHandler({
      [&](const kube::ObjectPtr& o) { server_changed(*o); },
      [&](const kube::ObjectPtr& a, const kube::ObjectPtr& b) {
        if (GenerationOf(*a) != GenerationOf(*b)) server_changed(*b);
      },
      [&](const kube::ObjectPtr& o) { server_changed(*o); },
  });
  // An owned Secret changed: its owner looks again (a credentials Secret
  // also changes its server's file; a config Secret wakes the server's
  // backends waiting for their user to appear in it).
  auto owned_secret_event = [&](const json& secret) {
    const std::string ns = kube::NamespaceOf(secret);
    auto meta = secret.find("metadata");
    if (meta == secret.end() || !meta->contains("ownerReferences")) return;
    for (const auto& ref : (*meta)["ownerReferences"]) {
      if (!ref.is_object()) continue;
      const std::string kind = ref.value("kind", "");
      const std::string owner_key = ns + "/" + ref.value("name", "");
      if (kind == kBackendKind) {
        backend_ctl.Enqueue(owner_key);
        if (auto b = backends.Get(owner_key)) {
          if (auto s = server_of(*b); !s.empty()) server_ctl.Enqueue(s);
        }
      } else if (kind == kServerKind) {
        // A new config: the backends that wait for it (not Ready yet, in a
        // rotation, or being deleted). Ready ones are not disturbed: with
        // 1,000 backends a config write would otherwise be 1,000 reconciles.
        // The index sees every content as it arrives, so a reloader's report
        // of any of them can be placed before or after a user's first one.
        server_ctl.Enqueue(owner_key);
        auto srv = servers.Get(owner_key);
        // The server's other Secret (AuthCallout mode's keys) is no config:
        // it wakes only the server.
        if (srv && kube::NameOf(secret) != api::NatsServerView(*srv).config_secret_name()) {
          continue;
        }
        if (srv) configs.Get(&secret, api::NatsServerView(*srv).config_key());
        for (const auto& b : backends.List()) {
          if (server_of(*b) == owner_key && WaitsForConfig(*b)) {
            backend_ctl.Enqueue(kube::ObjectKeyOf(*b));
          }
        }
      }
    }
  };
  secrets.AddEventHandler({
      [&](const kube::ObjectPtr& o) { owned_secret_event(*o); },
      [&](const kube::ObjectPtr&, const kube::ObjectPtr& b) { owned_secret_event(*b); },
      [&](const kube::ObjectPtr& o) { owned_secret_event(*o); },
  });

  backends.Start();
  servers.Start();
  secrets.Start();
  // Nothing is rendered or decided before every cache has its first list:
  // a render from a partial cache could drop users.
  while (!stop && !(backends.HasSynced() && servers.HasSynced() && secrets.HasSynced())) {
    Wait(std::chrono::milliseconds(50));
  }
  if (!stop) {
    synced = true;
    // The first lists' pages are garbage now (each page was parsed whole,
    // then shaped item by item): hand them back before the workers start
    // rather than up to 5 s later.
    malloc_trim(0);
    log::Info(kLogger, "caches synced; starting workers",
              {{"backends", backends.Size()},
               {"servers", servers.Size()},
               {"secrets", secrets.Size()},
               {"workers", opts.workers}});
    server_ctl.Start();
    backend_ctl.Start();
  }

  // Periodic queue-depth gauge (workers also set it), resync, and giving
  // freed heap back: a burst (1,000 new backends, a relist) frees far more
  // than the caches keep, scattered over glibc's per-thread arenas, and
  // glibc returns little of it to the kernel by itself.
  auto last_resync = std::chrono::steady_clock::now();
  auto last_trim = last_resync;
  while (!stop) {
    Wait(std::chrono::milliseconds(500));
    if (std::chrono::steady_clock::now() - last_trim > std::chrono::seconds(5)) {
      last_trim = std::chrono::steady_clock::now();
      recent.Prune();
      malloc_trim(0);
    }
    metrics.SetQueueDepth(kBackendKind, static_cast<double>(backend_ctl.queue().Depth()));
    metrics.SetQueueDepth(kServerKind, static_cast<double>(server_ctl.queue().Depth()));
    if (opts.resync_period.count() > 0 &&
        std::chrono::steady_clock::now() - last_resync > opts.resync_period) {
      last_resync = std::chrono::steady_clock::now();
      for (const auto& b : backends.List()) backend_ctl.Enqueue(kube::ObjectKeyOf(*b));
      for (const auto& s : servers.List()) server_ctl.Enqueue(kube::ObjectKeyOf(*s));
    }
  }

  // 5. Shutdown: finish running reconciles, stop watches, hand over.
  log::Info(kLogger, "shutting down");
  backend_ctl.Stop();
  server_ctl.Stop();
  probes.Stop();
  authorizer_checks.Stop();
  secrets.Stop();
  backends.Stop();
  servers.Stop();
  recorder.Flush(std::chrono::seconds(3));
  if (elector) {
    elector->Stop();
    if (renewer.joinable()) renewer.join();
    if (!lost) {
      Status s = elector->Release();
      if (!s.ok()) log::Warn(kLogger, "could not release the lease", {{"error", s.ToString()}});
    }
  }
  metrics.SetLeader(false);
  std::string rm = ca_dir;
  ::rmdir(rm.c_str());  // fails harmlessly when CA files remain
  health->Stop();
  if (lost) return Status::Unavailable("lost leadership: could not renew the Lease in time");
  return Status::Ok();
}

}  // namespace switchboard::operator_controller
