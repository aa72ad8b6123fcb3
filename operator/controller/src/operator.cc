#include "switchboard/operator_controller/operator.h"

// The operator's wiring: what is built in which order and started when.
// The parts live in their own files: leadership (operator_leader.cc), who
// wakes whom (operator_wiring.cc, wake_table.cc), the rules' context
// (rules_context.cc), housekeeping (operator_housekeeping.cc) and
// readiness (operator_health.cc).
#include <malloc.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <thread>

#include "account_syncs.h"
#include "authorizer_checks.h"
#include "cache_shapes.h"
#include "config_index.h"
#include "credential_sightings.h"
#include "operator_health.h"
#include "operator_housekeeping.h"
#include "operator_leader.h"
#include "operator_wiring.h"
#include "probe_pool.h"
#include "ready_gauge.h"
#include "rules_context.h"
#include "secret_cache.h"
#include "secret_io.h"
#include "switchboard/common/log.h"
#include "switchboard/kube/client.h"
#include "switchboard/kube/event_recorder.h"
#include "switchboard/kube/multi_store.h"
#include "switchboard/kube/watcher.h"
#include "switchboard/operator_controller/controller.h"
#include "switchboard/operator_controller/health_server.h"
#include "switchboard/operator_controller/metrics.h"
#include "switchboard/operator_controller/reconcilers.h"
#include "switchboard/operator_logic/objects.h"
#include "usage_collector.h"

namespace switchboard::operator_controller {
namespace {

constexpr const char* kLogger = "operator";
constexpr const char* kBackendKind = "PubSubBackend";
constexpr const char* kServerKind = "NatsServer";

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
  std::unique_ptr<Leadership> leadership;
  std::unique_ptr<HealthServer> health;

  void RequestStop() {
    stop = true;
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(stop_fd, &one, sizeof one);
  }
  // Returns after `d`, or at once when a stop was requested; false then.
  bool Wait(std::chrono::milliseconds d) {
    pollfd p{stop_fd, POLLIN, 0};
    [[maybe_unused]] int n = ::poll(&p, 1, static_cast<int>(d.count()));
    return !stop;
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
  // A fixed mmap threshold: glibc otherwise raises it to the size of each
  // large block freed, so after the first relist the next list pages and
  // response bodies (megabytes, short-lived) come from the heap and leave
  // it fragmented between the caches' long-lived nodes.
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);

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
  leadership = std::make_unique<Leadership>(opts, client.get(), config->default_namespace);
  // Relays Stop() to the elector (whose Stop takes a lock); joined when Run
  // returns, whatever the path.
  std::thread stop_watcher([this] {
    pollfd p{stop_fd, POLLIN, 0};
    while (!stop) ::poll(&p, 1, -1);
    leadership->Stop();
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
  health = std::make_unique<HealthServer>(
      [this] { return ReadinessProblem(leadership->elector(), synced); });
  SB_RETURN_IF_ERROR(health->Start(opts.health_addr));
  SB_RETURN_IF_ERROR(metrics.Serve(opts.metrics_addr));

  // 3. Leadership.
  if (stop) return Status::Ok();
  if (!leadership->Acquire([this] { RequestStop(); })) return Status::Ok();
  metrics.SetLeader(true);

  // 4. Caches, reconcilers, controllers. Secrets: only those labelled
  // managed-by=switchboard (the ones the operator writes, in today's and
  // earlier layouts); a Secret a user references is read by name.
  // Each cache keeps only what the reconcilers read (cache_shapes.h).
  kube::WatcherOptions wo;
  wo.parse_keep = CustomObjectFields();
  wo.transform = CompactCustomObject;
  // Before the caches: their informer threads call it until they stop.
  ReadyGauge ready_gauge(&metrics);
  kube::MultiStore backends(client.get(), kube::resources::PubSubBackend(), opts.namespaces, wo);
  kube::MultiStore servers(client.get(), kube::resources::NatsServer(), opts.namespaces, wo);
  kube::WatcherOptions so = wo;
  so.label_selector = std::string(operator_logic::kManagedByLabel) + "=" +
                      std::string(operator_logic::kManagedByValue);
  so.parse_keep = OwnedSecretFields();
  SecretCache secrets(client.get(), opts.namespaces, so);
  ConfigIndex configs;
  CredentialSightings credential_sightings;
  RecentWrites recent;
  std::unique_ptr<rules::ContextCache> rules_context = NewRulesContext(&backends, &servers);
  RefusedSet refused_backends, refused_servers;
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
  AccountSyncs account_syncs([&](const std::string& k) {
    if (server_ctl_ptr) server_ctl_ptr->Enqueue(k);
  });
  ReconcileContext rc;
  rc.authorizer_checks = &authorizer_checks;
  rc.account_syncs = &account_syncs;
  rc.client = client.get();
  rc.backends = &backends;
  rc.servers = &servers;
  rc.secrets = &secrets;
  rc.probes = &probes;
  rc.configs = &configs;
  rc.credential_sightings = &credential_sightings;
  rc.rules_context = rules_context.get();
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

  WireCaches({&backends, &servers, &secrets}, &configs, rules_context.get(),
             {&refused_backends, &refused_servers}, [&](Kind kind, const std::string& key) {
               (kind == Kind::kServer ? server_ctl : backend_ctl).Enqueue(key);
             });
  backends.AddEventHandler(ready_gauge.Handler());

  // Per-installation usage (usage_collector.h): the leader's, from once the
  // caches synced until shutdown.
  UsageMetrics usage_metrics(*metrics.registry());
  operator_logic::InstallationAccountCache usage_account_keys;  // the collector thread only
  UsageCollector usage(
      &usage_metrics, [&] { return UsageTargetsOf(rc, &usage_account_keys); },
      [&](const std::string& k) -> std::optional<int64_t> {
        const auto slash = k.find('/');
        kube::ObjectPtr b = backends.Get(k.substr(0, slash), k.substr(slash + 1));
        if (!b) return std::nullopt;
        const nlohmann::json status = operator_logic::StatusOf(*b);
        auto it = status.find("connections");
        if (it == status.end() || !it->is_number_integer()) return std::nullopt;
        return it->get<int64_t>();
      },
      [&](const std::string& k, int64_t connections) {
        const auto slash = k.find('/');
        kube::PatchOptions po;
        po.subresource = "status";
        auto r = client->Patch(kube::resources::PubSubBackend(), k.substr(0, slash),
                               k.substr(slash + 1), kube::PatchType::kMerge,
                               nlohmann::json{{"status", {{"connections", connections}}}}, po);
        return r.ok();
      },
      {});

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
    TrimHeap();
    log::Info(kLogger, "caches synced; starting workers",
              {{"backends", backends.Size()},
               {"servers", servers.Size()},
               {"secrets", secrets.Size()},
               {"workers", opts.workers}});
    server_ctl.Start();
    backend_ctl.Start();
    usage.Start();
  }

  HousekeepingSchedule schedule(std::chrono::steady_clock::now(), opts.resync_period);
  RunHousekeeping(
      schedule,
      {.trim =
           [&] {
             recent.Prune();
             TrimHeap();
           },
       .gauges =
           [&] {
             metrics.SetQueueDepth(kBackendKind, static_cast<double>(backend_ctl.queue().Depth()));
             metrics.SetQueueDepth(kServerKind, static_cast<double>(server_ctl.queue().Depth()));
           },
       .resync =
           [&] {
             for (const auto& b : backends.List()) {
               backend_ctl.Enqueue(kube::ObjectKeyOf(*b));
             }
             for (const auto& s : servers.List()) {
               server_ctl.Enqueue(kube::ObjectKeyOf(*s));
             }
           }},
      [this](std::chrono::milliseconds d) { return Wait(d); });

  // 5. Shutdown: finish running reconciles, stop watches, hand over.
  log::Info(kLogger, "shutting down");
  usage.Stop();
  backend_ctl.Stop();
  server_ctl.Stop();
  probes.Stop();
  authorizer_checks.Stop();
  account_syncs.Stop();
  secrets.Stop();
  backends.Stop();
  servers.Stop();
  recorder.Flush(std::chrono::seconds(3));
  leadership->Release();
  metrics.SetLeader(false);
  std::string rm = ca_dir;
  ::rmdir(rm.c_str());  // fails harmlessly when CA files remain
  health->Stop();
  if (leadership->lost()) {
    return Status::Unavailable("lost leadership: could not renew the Lease in time");
  }
  return Status::Ok();
}

}  // namespace switchboard::operator_controller
