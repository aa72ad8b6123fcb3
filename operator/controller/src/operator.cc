#include "switchboard/controller/operator.h"

#include <sys/stat.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "backend_spec.h"
#include "k8s_util.h"
#include "switchboard/common/log.h"
#include "switchboard/controller/controller.h"
#include "switchboard/controller/health_server.h"
#include "switchboard/controller/kube_lease_store.h"
#include "switchboard/controller/leader_election.h"
#include "switchboard/controller/metrics.h"
#include "switchboard/controller/multi_store.h"
#include "switchboard/controller/reconcilers.h"
#include "switchboard/controller/registry.h"
#include "switchboard/kube/client.h"
#include "switchboard/kube/event_recorder.h"
#include "switchboard/kube/watcher.h"

namespace switchboard::controller {
namespace {

constexpr const char* kLogger = "operator";
constexpr const char* kBackendKind = "PubSubBackend";
constexpr const char* kServerKind = "NatsServer";

std::string DefaultIdentity() {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  return std::string(host) + "_" + std::to_string(getpid());
}

// Metadata a reconcile reacts to besides the spec (generation).
bool MetaChanged(const json& a, const json& b) {
  const json& ma = a["metadata"];
  const json& mb = b["metadata"];
  return GenerationOf(a) != GenerationOf(b) ||
         ma.value("annotations", json()) != mb.value("annotations", json()) ||
         ma.value("finalizers", json()) != mb.value("finalizers", json()) ||
         ma.value("deletionTimestamp", json()) != mb.value("deletionTimestamp", json()) ||
         ma.value("labels", json()) != mb.value("labels", json());
}

}  // namespace

struct Operator::Impl {
  Options opts;
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::condition_variable cv;
  std::atomic<bool> synced{false};

  Metrics metrics;
  std::unique_ptr<HealthServer> health;
  std::unique_ptr<kube::Client> client;
  std::unique_ptr<LeaderElector> elector;

  void Wait(std::chrono::milliseconds d) {
    std::unique_lock lock(mu);
    cv.wait_for(lock, d, [&] { return stop.load(); });
  }

  Status Run();
};

Operator::Operator(Options options) : impl_(new Impl) { impl_->opts = std::move(options); }
Operator::~Operator() = default;

void Operator::Stop() {
  impl_->stop = true;
  impl_->cv.notify_all();
  if (impl_->elector) impl_->elector->Stop();
}

Status Operator::Run() { return impl_->Run(); }

Status Operator::Impl::Run() {
  // 1. API access: --kubeconfig, else $KUBECONFIG, else in-cluster.
  auto config = kube::Config::Load(opts.kubeconfig);
  if (!config.ok()) return config.status().Annotate("kubeconfig");
  config->user_agent = "switchboard-operator";
  config->timeout = std::chrono::seconds(15);
  auto c = kube::Client::New(*config);
  if (!c.ok()) return c.status().Annotate("kube client");
  client = std::move(c).value();

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
    if (stop) return Status::Ok();
    if (!elector->AcquireBlocking()) return Status::Ok();  // stopped while standing by
    metrics.SetLeader(true);
    renewer = std::thread([&] {
      if (!elector->RenewLoop()) {
        lost = true;
        stop = true;
        cv.notify_all();
      }
    });
  } else {
    metrics.SetLeader(true);
  }

  // 4. Caches, reconcilers, controllers.
  kube::WatcherOptions wo;
  MultiStore backends(client.get(), kube::resources::PubSubBackend(), opts.namespaces, wo);
  MultiStore servers(client.get(), kube::resources::NatsServer(), opts.namespaces, wo);
  Registry registry;
  kube::EventRecorder::Options ro;
  ro.component = "switchboard-operator";
  kube::EventRecorder recorder(client.get(), ro);

  std::string ca_dir = "/tmp/switchboard-operator-" + std::to_string(getpid());
  ::mkdir(ca_dir.c_str(), 0700);

  Controller* backend_ctl_ptr = nullptr;
  Controller* server_ctl_ptr = nullptr;
  ReconcileContext rc;
  rc.client = client.get();
  rc.backends = &backends;
  rc.servers = &servers;
  rc.registry = &registry;
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

  backends.AddEventHandler({
      [&](const kube::ObjectPtr& o) { backend_ctl.Enqueue(kube::ObjectKeyOf(*o)); },
      [&](const kube::ObjectPtr& a, const kube::ObjectPtr& b) {
        if (MetaChanged(*a, *b)) backend_ctl.Enqueue(kube::ObjectKeyOf(*b));
      },
      [&](const kube::ObjectPtr& o) {
        backend_ctl.Enqueue(kube::ObjectKeyOf(*o));
        if (auto s = ServerKeyOf(*o); !s.empty()) server_ctl.Enqueue(s);
      },
  });
  auto server_changed = [&](const json& s) {
    std::string key = kube::ObjectKeyOf(s);
    server_ctl.Enqueue(key);
    for (const auto& b : backends.List()) {
      if (ServerKeyOf(*b) == key) backend_ctl.Enqueue(kube::ObjectKeyOf(*b));
    }
  };
  servers.AddEventHandler({
      [&](const kube::ObjectPtr& o) { server_changed(*o); },
      [&](const kube::ObjectPtr& a, const kube::ObjectPtr& b) {
        if (GenerationOf(*a) != GenerationOf(*b)) server_changed(*b);
      },
      [&](const kube::ObjectPtr& o) { server_changed(*o); },
  });

  // Secrets: no cache (memory); events map to the backends and servers
  // that read them: credentials, referenced passwords and URLs, env and
  // config Secrets (someone deleting one gets it rewritten).
  auto secret_event = [&](const json& secret) {
    const std::string ns = kube::NamespaceOf(secret);
    const std::string name = kube::NameOf(secret);
    for (const auto& b : backends.List(ns)) {
      BackendSpec s = ReadBackendSpec(*b);
      if (name == s.credentials_secret() || name == s.password_secret || name == s.url_secret ||
          name == s.env_secret) {
        backend_ctl.Enqueue(s.key());
      }
    }
    for (const auto& srv : servers.List(ns)) {
      ServerSpec s = ReadServerSpec(*srv);
      if (name == s.config_secret) server_ctl.Enqueue(s.key());
      if (name == s.ca_secret) server_changed(*srv);
    }
  };
  std::vector<std::unique_ptr<kube::Watcher>> secret_watchers;
  std::vector<std::string> secret_ns = opts.namespaces;
  if (secret_ns.empty()) secret_ns.push_back("");
  for (const auto& ns : secret_ns) {
    secret_watchers.push_back(std::make_unique<kube::Watcher>(
        client.get(), kube::resources::Secret(), ns, wo, [&](const kube::WatcherEvent& e) {
          if (!synced) return;  // the initial list enqueues everything anyway
          if (e.type == kube::WatcherEvent::Type::kApplied ||
              e.type == kube::WatcherEvent::Type::kDeleted) {
            secret_event(e.object);
          }
        }));
  }

  backends.Start();
  servers.Start();
  for (auto& w : secret_watchers) w->Start();
  while (!stop && !(backends.HasSynced() && servers.HasSynced())) {
    Wait(std::chrono::milliseconds(50));
  }
  if (!stop) {
    rc.started = std::chrono::steady_clock::now();
    synced = true;
    log::Info(
        kLogger, "caches synced; starting workers",
        {{"backends", backends.Size()}, {"servers", servers.Size()}, {"workers", opts.workers}});
    server_ctl.Start();
    backend_ctl.Start();
  }

  // Periodic queue-depth gauge (workers also set it) and resync.
  auto last_resync = std::chrono::steady_clock::now();
  while (!stop) {
    Wait(std::chrono::milliseconds(500));
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
  for (auto& w : secret_watchers) w->Stop();
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

}  // namespace switchboard::controller
