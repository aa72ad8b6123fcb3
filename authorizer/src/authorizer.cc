#include "switchboard/authorizer/authorizer.h"

#include <malloc.h>
#include <poll.h>
#include <prometheus/registry.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>

#include "switchboard/authorizer/installations.h"
#include "switchboard/authorizer/metrics.h"
#include "switchboard/authorizer/rebuild_pacing.h"
#include "switchboard/authorizer/served.h"
#include "switchboard/common/log.h"
#include "switchboard/kube/client.h"
#include "switchboard/kube/config.h"
#include "switchboard/kube/endpoints_server.h"
#include "switchboard/kube/multi_store.h"
#include "switchboard/kube/resource.h"
#include "switchboard/operator_logic/objects.h"

namespace switchboard::authorizer {
namespace {

constexpr const char* kLogger = "authorizer";
constexpr int64_t kListPageSize = 100;
using nlohmann::json;

// One watcher per namespace (or one for all) of a resource, handing its
// events to `step`, which says whether a rebuild is due.
class Feed {
 public:
  using Step = std::function<bool(const kube::WatcherEvent&, std::string_view scope)>;
  Feed(kube::Client* client, const kube::ResourceRef& resource,
       const std::vector<std::string>& namespaces, const kube::WatcherOptions& opts, Step step,
       std::function<void()> wake) {
    std::vector<std::string> scopes = namespaces;
    if (scopes.empty()) scopes.push_back("");
    for (const std::string& ns : scopes) {
      watchers_.push_back(std::make_unique<kube::Watcher>(
          client, resource, ns, opts, [step, wake, ns](kube::WatcherEvent& ev) {
            // A relist wakes once, at its end (its items are one burst).
            if (step(ev, ns) || ev.type == kube::WatcherEvent::Type::kRestarted) wake();
          }));
    }
  }
  void Start() {
    for (auto& w : watchers_) w->Start();
  }
  void Stop() {
    for (auto& w : watchers_) w->Stop();
  }
  // Every watcher has listed once: the cache holds the cluster's objects.
  bool HasSynced() const {
    for (const auto& w : watchers_) {
      if (w->lists() == 0) return false;
    }
    return true;
  }

 private:
  std::vector<std::unique_ptr<kube::Watcher>> watchers_;
};

}  // namespace

std::string ReadinessOf(bool synced,
                        const std::vector<std::pair<std::string, SessionHealth>>& sessions) {
  if (!synced) return "caches not synced";
  std::string why;
  for (const auto& [key, h] : sessions) {
    if (!h.attempted) {
      why += (why.empty() ? "" : "; ") + key + ": connecting";
    } else if (!h.connected && h.tls_failed) {
      why += (why.empty() ? "" : "; ") + key + ": TLS refused (" + h.error +
             "); check the CA of spec.tls.caSecretRef and the servers' certificates";
    } else if (h.connected && !h.subscribed) {
      why += (why.empty() ? "" : "; ") + key + ": connected, not subscribed" +
             (h.error.empty() ? "" : " (" + h.error + ")");
    }
  }
  return why;
}

struct Authorizer::Impl {
  Options opts;
  SessionOptions session_opts;
  std::atomic<bool> stop{false};
  int stop_fd = -1;  // readable once Stop() was called
  int wake_fd = -1;  // readable when a cache changed

  std::atomic<bool> synced{false};
  std::mutex mu;
  std::map<std::string, std::unique_ptr<ServerSession>> sessions;  // guarded by mu
  std::map<std::string, std::string> reported;  // key -> last build error logged (manager thread)

  void RequestStop() {
    stop = true;
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(stop_fd, &one, sizeof one);
  }
  void Wake() {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_fd, &one, sizeof one);
  }
  void WaitForStop(std::chrono::milliseconds timeout) {
    if (timeout.count() <= 0) return;
    pollfd p = {stop_fd, POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(timeout.count()));
  }
  // Until stopped, a cache changed, or `timeout`: true when woken by a change.
  bool WaitForChange(int timeout_ms) {
    pollfd p[2] = {{stop_fd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
    if (::poll(p, 2, timeout_ms) <= 0) return false;
    if (p[1].revents & POLLIN) {
      uint64_t n = 0;
      [[maybe_unused]] ssize_t r = ::read(wake_fd, &n, sizeof n);
      return true;
    }
    return false;
  }

  std::string Ready() {
    std::vector<std::pair<std::string, SessionHealth>> health;
    {
      std::lock_guard lock(mu);
      for (const auto& [key, s] : sessions) health.emplace_back(key, s->Health());
    }
    return ReadinessOf(synced, health);
  }

  void Rebuild(kube::MultiStore& servers, const InstallationCache& cache, Metrics* metrics) {
    // Shared snapshots: the watchers go on while the rebuild reads them.
    const std::vector<InstallationCache::RecordPtr> records = cache.Records();
    auto callout = [&](std::string_view ns, std::string_view name) {
      return cache.Callout(ns, name);
    };
    std::map<std::string, std::shared_ptr<const ServedServer>> desired;
    for (const auto& server : servers.List()) {
      if (!Selected(*server, opts.servers)) continue;
      const std::string key = kube::ObjectKeyOf(*server);
      auto built = BuildServedServer(*server, records, callout);
      if (!built.ok()) {
        if (reported[key] != built.status().message()) {
          reported[key] = built.status().message();
          log::Warn(kLogger, "not serving this NatsServer yet",
                    {{"server", key}, {"reason", built.status().message()}});
        }
        continue;
      }
      reported.erase(key);
      desired.emplace(key, std::make_shared<const ServedServer>(std::move(built).value()));
    }
    // Sessions are destroyed outside the lock: that drains them.
    std::vector<std::unique_ptr<ServerSession>> gone;
    std::vector<std::pair<std::string, std::shared_ptr<const ServedServer>>> start;
    {
      std::lock_guard lock(mu);
      for (auto it = sessions.begin(); it != sessions.end();) {
        auto d = desired.find(it->first);
        if (d == desired.end() || !it->second->served()->SameConnections(*d->second)) {
          gone.push_back(std::move(it->second));
          it = sessions.erase(it);
        } else {
          it->second->Update(d->second);
          ++it;
        }
      }
      for (auto& [key, served] : desired) {
        if (!sessions.contains(key)) start.emplace_back(key, served);
      }
    }
    for (auto& g : gone) {
      log::Info(kLogger, "no longer serving this NatsServer (or its connection changed)",
                {{"server", g->served()->key()}});
    }
    gone.clear();
    for (auto& [key, served] : start) {
      log::Info(kLogger, "serving NatsServer",
                {{"server", key},
                 {"account", served->account},
                 {"installations", served->directory->by_user.size()}});
      auto session = std::make_unique<ServerSession>(served, session_opts, metrics);
      std::lock_guard lock(mu);
      sessions.emplace(key, std::move(session));
    }
    desired.clear();
    ReturnFreedMemory();
  }

  // A rebuild frees a whole Directory and the watchers free every list
  // page; glibc keeps such memory in each thread's arena, so without this
  // the resident size keeps the high-water mark of every burst.
  static void ReturnFreedMemory() {
#ifdef __GLIBC__
    ::malloc_trim(0);
#endif
  }

  // Rebuild, counted and timed in the metrics; returns how long it took.
  std::chrono::steady_clock::duration TimedRebuild(kube::MultiStore& servers,
                                                   const InstallationCache& cache,
                                                   Metrics* metrics) {
    const auto started = std::chrono::steady_clock::now();
    Rebuild(servers, cache, metrics);
    const auto took = std::chrono::steady_clock::now() - started;
    metrics->ObserveRebuild(std::chrono::duration<double>(took).count());
    return took;
  }

  Status Run();
};

Authorizer::Authorizer(Options options, SessionOptions session) : impl_(std::make_unique<Impl>()) {
  impl_->opts = std::move(options);
  impl_->session_opts = std::move(session);
  impl_->session_opts.request_workers = impl_->opts.request_workers;
  impl_->session_opts.sweep_interval = impl_->opts.sweep_interval;
  impl_->session_opts.kick_after = impl_->opts.kick_after;
  impl_->stop_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  impl_->wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

Authorizer::~Authorizer() {
  if (impl_->stop_fd >= 0) ::close(impl_->stop_fd);
  if (impl_->wake_fd >= 0) ::close(impl_->wake_fd);
}

void Authorizer::Stop() { impl_->RequestStop(); }

Status Authorizer::Run() { return impl_->Run(); }

Status Authorizer::Impl::Run() {
  if (stop_fd < 0 || wake_fd < 0) return Status::Internal("eventfd could not be created");
  auto config = kube::Config::Load(opts.kubeconfig);
  if (!config.ok()) return config.status().Annotate("kubeconfig");
  config->user_agent = "switchboard-authorizer";
  config->timeout = std::chrono::seconds(15);
  auto c = kube::Client::New(*config);
  if (!c.ok()) return c.status().Annotate("kube client");
  std::unique_ptr<kube::Client> client = std::move(c).value();

  auto registry = std::make_shared<prometheus::Registry>();
  Metrics metrics(registry);
  std::vector<std::unique_ptr<kube::EndpointsServer>> endpoints;
  const bool shared = opts.health.port >= 0 && opts.health.port == opts.metrics.port &&
                      opts.health.host == opts.metrics.host && opts.health.port != 0;
  if (opts.health.port >= 0) {
    kube::EndpointsOptions eo{.host = opts.health.host, .port = opts.health.port};
    eo.ready = [this] { return Ready(); };
    if (shared) eo.metrics = registry;
    auto s = kube::EndpointsServer::Start(eo);
    if (!s.ok()) return s.status().Annotate("--health-addr");
    log::Info(kLogger, "serving /healthz and /readyz", {{"port", (*s)->port()}});
    endpoints.push_back(std::move(s).value());
  }
  if (opts.metrics.port >= 0 && !shared) {
    kube::EndpointsOptions eo{.host = opts.metrics.host, .port = opts.metrics.port};
    eo.metrics = registry;
    auto s = kube::EndpointsServer::Start(eo);
    if (!s.ok()) return s.status().Annotate("--metrics-addr");
    log::Info(kLogger, "serving /metrics", {{"port", (*s)->port()}});
    endpoints.push_back(std::move(s).value());
  }

  // What the decisions read: a record per backend and the callout Secrets,
  // decoded as their events arrive (installations.h); of the few
  // NatsServers their metadata and spec. Secrets only those labelled
  // managed-by=switchboard (the callout and the credentials Secrets are).
  // Each object is parsed keeping only what is read (the field masks), in
  // pages of 100 handed on item by item (stream_list): a relist never
  // holds a whole list parsed.
  InstallationCache cache;
  auto wake = [this] { Wake(); };
  kube::WatcherOptions bo;
  bo.page_size = kListPageSize;
  bo.stream_list = true;
  bo.parse_keep = BackendFields();
  Feed backends(
      client.get(), kube::resources::PubSubBackend(), opts.namespaces, bo,
      [&cache](const kube::WatcherEvent& ev, std::string_view scope) {
        return cache.OnBackendEvent(ev, scope);
      },
      wake);
  kube::WatcherOptions so;
  so.page_size = kListPageSize;
  so.stream_list = true;
  so.label_selector = std::string(operator_logic::kManagedByLabel) + "=" +
                      std::string(operator_logic::kManagedByValue);
  so.parse_keep = SecretFields();
  Feed secrets(
      client.get(), kube::resources::Secret(), opts.namespaces, so,
      [&cache](const kube::WatcherEvent& ev, std::string_view scope) {
        return cache.OnSecretEvent(ev, scope);
      },
      wake);
  kube::WatcherOptions no;
  no.page_size = kListPageSize;
  no.parse_keep = ServerFields();
  kube::MultiStore servers(client.get(), kube::resources::NatsServer(), opts.namespaces, no);
  servers.AddEventHandler(kube::StoreEventHandler{
      [this](const kube::ObjectPtr&) { Wake(); },
      [this](const kube::ObjectPtr& before, const kube::ObjectPtr& after) {
        if (!before || !after || ChangesWhatIsServed(*before, *after)) Wake();
      },
      [this](const kube::ObjectPtr&) { Wake(); },
  });
  backends.Start();
  servers.Start();
  secrets.Start();
  while (!stop && !(backends.HasSynced() && servers.HasSynced() && secrets.HasSynced())) {
    WaitForChange(50);
  }
  if (!stop) {
    log::Info(kLogger, "caches synced",
              {{"servers", servers.Size()},
               {"backends", cache.backends()},
               {"secrets", cache.secrets()}});
    TimedRebuild(servers, cache, &metrics);
    synced = true;
  }
  while (!stop) {
    // A burst of changes is one rebuild: the wake-up counter is read at
    // once, and the pause after a rebuild (RebuildPause) gathers the
    // changes that arrive meanwhile into the next one.
    if (!WaitForChange(-1)) continue;
    WaitForStop(RebuildPause(TimedRebuild(servers, cache, &metrics)));
  }

  log::Info(kLogger, "stopping: draining every NatsServer's session");
  std::map<std::string, std::unique_ptr<ServerSession>> drained;
  {
    std::lock_guard lock(mu);
    drained.swap(sessions);
  }
  drained.clear();
  backends.Stop();
  servers.Stop();
  secrets.Stop();
  endpoints.clear();
  return Status::Ok();
}

}  // namespace switchboard::authorizer
