// What reaches NATS is a function of cluster state: with N backends Ready
// and engine-like connections open, no user is dropped, no connection is
// closed, no Secret changes and no backend leaves Ready=True while
//   (a) the operator is SIGKILLed and a new one starts,
//   (b) the leader dies and the standby takes over,
//   (c) the API server restarts (scripts/cluster.sh restart-apiserver),
//   (d) the operator restarts and the API server is then frozen (SIGSTOP)
//       for 45 s, longer than any wait in the operator (watch backoff max
//       30 s, lease 4 s here, probe timeout 2 s), before it comes back.
// In both provisioning modes (the test's parameter):
//   IncludeFile  nats-server including the rendered file, kept by
//                switchboard-config-sync: the file never has fewer than N
//                users.
//   AuthCallout  nats-server-callout on the static config the operator
//                wrote, two switchboard-authorizer replicas: every
//                backend's credentials authenticate through the callout in
//                every sample, the callout Secret (issuer key included) and
//                the static config never change, and the server never
//                loads its config again (/varz config_load_time).
// Losing the Lease in (c) is allowed (a restart longer than the renew
// deadline; the replica exits 1 and its Deployment would start it again):
// some replica leads again once the API server is back.
// Everything is real: kube-apiserver + etcd (fixture "cluster"), the
// binaries of this build. RUN_SERIAL: it restarts and freezes the shared API
// server.
//
// N: SWITCHBOARD_OUTAGE_BACKENDS (default 300), one connection per 10.
#include <gtest/gtest.h>
#include <nats/nats.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "switchboard/common/base64.h"
#include "switchboard/kube/client.h"
#include "switchboard/kube/config.h"
#include "switchboard/testing/e2e_harness.h"
#include "switchboard/testing/metrics_text.h"
#include "switchboard/testing/objects.h"
#include "switchboard/testing/wait.h"

namespace switchboard::e2e {
namespace {

using namespace std::chrono_literals;

constexpr char kServer[] = "shared";

enum class Mode { kIncludeFile, kAuthCallout };

std::string ModeName(const ::testing::TestParamInfo<Mode>& info) {
  return info.param == Mode::kAuthCallout ? "AuthCallout" : "IncludeFile";
}

int Backends() {
  const char* n = std::getenv("SWITCHBOARD_OUTAGE_BACKENDS");
  return n && std::atoi(n) > 0 ? std::atoi(n) : 300;
}

std::string Name(int i) { return "b" + std::to_string(i); }

int CountUsers(const std::string& text) {
  int n = 0;
  for (size_t pos = 0; (pos = text.find("{user: \"", pos)) != std::string::npos; pos++) n++;
  return n;
}

using ::switchboard::testing::MetricSum;

// One connect with a user's credentials, closed at once: "" when the server
// accepted them, else why not. A refusal (Authorization Violation, which is
// also what a callout nobody answered in time gets) is final; a connect
// that timed out on a loaded machine says nothing about the user and is
// tried again.
std::string Authenticate(const std::string& url, const std::string& user,
                         const std::string& password) {
  std::string why;
  for (int attempt = 0; attempt < 3; attempt++) {
    natsOptions* opts = nullptr;
    natsConnection* nc = nullptr;
    natsOptions_Create(&opts);
    natsOptions_SetURL(opts, url.c_str());
    natsOptions_SetUserInfo(opts, user.c_str(), password.c_str());
    natsOptions_SetAllowReconnect(opts, false);
    natsOptions_SetTimeout(opts, 10000);
    natsStatus s = natsConnection_Connect(&nc, opts);
    why =
        s == NATS_OK ? "" : std::string(natsStatus_GetText(s)) + ": " + nats_GetLastError(nullptr);
    if (nc) natsConnection_Destroy(nc);
    natsOptions_Destroy(opts);
    if (s != NATS_TIMEOUT && s != NATS_NO_SERVER) break;
  }
  return why;
}

// An engine-like NATS connection: the env Secret's credentials, reconnect
// forever, a subscription on its prefix. Counts every disconnect.
class EngineConnection {
 public:
  explicit EngineConnection(const std::map<std::string, std::string>& env) {
    natsOptions_Create(&opts_);
    natsOptions_SetURL(opts_, env.at("SERVER_MSGQUEUE_PUBSUB_NATS_URL").c_str());
    natsOptions_SetUserInfo(opts_, env.at("SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME").c_str(),
                            env.at("SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD").c_str());
    natsOptions_SetMaxReconnect(opts_, -1);
    natsOptions_SetDisconnectedCB(opts_, &EngineConnection::OnDisconnected, events_.get());
    natsOptions_SetClosedCB(opts_, &EngineConnection::OnClosed, events_.get());
    ok_ = natsConnection_Connect(&nc_, opts_) == NATS_OK;
    const std::string subject = env.at("SERVER_MSGQUEUE_PUBSUB_NATS_SUBJECT_PREFIX") + ".*";
    ok_ = ok_ && natsConnection_SubscribeSync(&sub_, nc_, subject.c_str()) == NATS_OK &&
          natsConnection_Flush(nc_) == NATS_OK;
  }
  // nats.c runs the disconnected and closed callbacks on its own callback
  // thread, after natsConnection_Close has returned: their state must live
  // until the closed one (the last) has run. Close also joins the reader,
  // so the subscription can go then.
  ~EngineConnection() {
    if (nc_) {
      events_->closing = true;
      natsConnection_Close(nc_);
      std::unique_lock lock(events_->mu);
      const bool closed = events_->cv.wait_for(lock, 30s, [&] { return events_->closed; });
      lock.unlock();
      if (!closed) {
        ADD_FAILURE() << "nats.c never called the closed callback";
        (void)events_.release();  // a late callback must not reach freed memory
      }
    }
    if (sub_) natsSubscription_Destroy(sub_);
    if (nc_) natsConnection_Destroy(nc_);
    natsOptions_Destroy(opts_);
  }
  EngineConnection(const EngineConnection&) = delete;
  EngineConnection& operator=(const EngineConnection&) = delete;

  bool ok() const { return ok_; }
  bool connected() const { return nc_ && natsConnection_Status(nc_) == NATS_CONN_STATUS_CONNECTED; }
  int disconnects() const { return events_->disconnects.load(); }

 private:
  struct Events {
    std::atomic<int> disconnects{0};
    std::atomic<bool> closing{false};
    std::mutex mu;
    std::condition_variable cv;
    bool closed = false;  // guarded by mu
  };
  static void OnDisconnected(natsConnection*, void* closure) {
    auto* e = static_cast<Events*>(closure);
    if (!e->closing) e->disconnects.fetch_add(1);
  }
  static void OnClosed(natsConnection*, void* closure) {
    auto* e = static_cast<Events*>(closure);
    if (!e->closing) e->disconnects.fetch_add(1);
    std::lock_guard lock(e->mu);
    e->closed = true;
    e->cv.notify_all();
  }

  std::unique_ptr<Events> events_ = std::make_unique<Events>();
  natsOptions* opts_ = nullptr;
  natsConnection* nc_ = nullptr;
  natsSubscription* sub_ = nullptr;
  bool ok_ = false;
};

// SIGCONTs the API server on every exit path of a freeze.
struct Frozen {
  pid_t pid;
  explicit Frozen(pid_t p) : pid(p) { kill(pid, SIGSTOP); }
  ~Frozen() { kill(pid, SIGCONT); }
};

// A thread running `step` until stopped, waiting `pause` between steps
// (woken at once by Stop). Joined on destruction.
class Sampler {
 public:
  Sampler(std::chrono::milliseconds pause, std::function<void()> step)
      : thread_([this, pause, step = std::move(step)] {
          std::unique_lock lock(mu_);
          while (!stop_) {
            lock.unlock();
            step();
            lock.lock();
            cv_.wait_for(lock, pause, [&] { return stop_; });
          }
        }) {}
  ~Sampler() { Stop(); }
  void Stop() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

class OperatorOutageE2E : public ::testing::TestWithParam<Mode> {
 protected:
  // After every connection of the suite is gone: nats.c's threads finish
  // before the process exits.
  static void TearDownTestSuite() { nats_CloseAndWait(30000); }

  void SetUp() override {
    ASSERT_FALSE(Kubeconfig().empty()) << "run through ctest (fixture cluster)";
    auto cfg = kube::Config::FromKubeconfig(Kubeconfig());
    ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
    auto c = kube::Client::New(*cfg);
    ASSERT_TRUE(c.ok());
    client = std::move(c).value();
    ns = UniqueName("op-outage");
    CreateNamespace(ns);
    if (callout()) {
      ASSERT_EQ(access(CalloutNatsServerBinary().c_str(), X_OK), 0)
          << CalloutNatsServerBinary() << " is missing (make tools, or SWITCHBOARD_TOOLS_DIR)";
      callout_nats = std::make_unique<CalloutNats>(ns, kServer, std::vector<std::string>{ns});
    } else {
      file_nats = std::make_unique<LocalNats>();
      ASSERT_TRUE(file_nats->ok());
      sync = StartConfigSync(*file_nats, ns, std::string(kServer) + "-switchboard");
    }
  }
  // Everything that calls back into the fixture stops first: the samplers,
  // then the connections (whose destructor waits for nats.c's last
  // callback); the operators go after the namespace (finalizers).
  void TearDown() override {
    users_sampler.reset();
    status_sampler.reset();
    if (HasFailure()) {
      for (auto* p : {op.get(), standby.get()}) {
        if (p) std::cerr << "operator log (tail):\n" << LogTail(p->Log()) << "\n";
      }
      if (callout_nats) std::cerr << callout_nats->Logs();
    }
    connections.clear();
    if (!ns.empty()) DeleteNamespace(ns);
    op.reset();
    standby.reset();
    callout_nats.reset();
    sync.Stop();
  }

  bool callout() const { return GetParam() == Mode::kAuthCallout; }
  std::string url() const { return callout() ? callout_nats->url() : file_nats->url(); }

  std::unique_ptr<OperatorProcess> StartOperator(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"--probe-interval", "5m", "--workers", "8"};
    // A probe through the callout waits for the authorizer's answer too.
    if (callout()) args.insert(args.end(), {"--probe-timeout", "5s"});
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<OperatorProcess>(std::vector<std::string>{ns}, args);
  }
  std::vector<std::string> LeaderElection(const std::string& identity) {
    return {"--leader-elect",
            "--lease-namespace",
            ns,
            "--lease-duration",
            "4s",
            "--renew-deadline",
            "3s",
            "--retry-period",
            "1s",
            "--identity",
            identity};
  }
  // The process synced its caches and reconciled every backend and the server.
  static bool Reconciled(OperatorProcess& p, int backends) {
    std::string m = p.Metrics();
    return MetricSum(m, "switchboard_reconcile_total", "kind=\"PubSubBackend\"") >= backends &&
           MetricSum(m, "switchboard_reconcile_total", "kind=\"NatsServer\"") >= 1;
  }
  static bool Converged(OperatorProcess& p, int backends) {
    return testing::WaitFor([&] { return Reconciled(p, backends); }, 120s, 100ms);
  }
  static bool Leads(OperatorProcess& p) {
    return MetricSum(p.Metrics(), "switchboard_leader", "") == 1;
  }
  // SIGKILL to every operator still running; the exit status of one that
  // had already exited on its own is what the caller judges.
  void KillOperators() {
    for (auto* p : {op.get(), standby.get()}) {
      if (p && p->process().Signal(SIGKILL)) p->process().Wait(10s);
    }
    op.reset();
    standby.reset();
  }

  std::vector<json> ListBackends() {
    auto list = client->ListAll(kube::resources::PubSubBackend(), ns);
    if (!list.ok() || !list->contains("items")) return {};
    return (*list)["items"].get<std::vector<json>>();
  }
  static bool IsReady(const json& b) { return ReadyStatus(b) == "True"; }
  int ReadyCount() {
    int ready = 0;
    for (const auto& b : ListBackends()) ready += IsReady(b) ? 1 : 0;
    return ready;
  }
  void CreateBackend(const std::string& name) {
    json b = ::switchboard::testing::BackendBuilder(ns, name)
                 .Server("", kServer)
                 .Prefix("hatchet." + name);
    auto r = client->Create(kube::resources::PubSubBackend(), b);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }

  // The data of every Secret the test watches: each backend's env and
  // credentials Secret; in AuthCallout mode also the callout Secret (the
  // issuer's key pair) and the static config. One list.
  std::map<std::string, json> WatchedSecrets(int n) {
    std::map<std::string, json> out;
    std::set<std::string> watched;
    for (int i = 0; i < n; i++) {
      watched.insert(Name(i) + "-pubsub-env");
      watched.insert(Name(i) + "-nats-credentials");
    }
    if (callout()) {
      watched.insert(std::string(kServer) + "-auth-callout");
      watched.insert(std::string(kServer) + "-switchboard");
    }
    auto list = client->ListAll(kube::resources::Secret(), ns);
    if (!list.ok()) {
      ADD_FAILURE() << "listing Secrets: " << list.status().ToString();
      return out;
    }
    for (const auto& s : list->value("items", json::array())) {
      std::string name = s["metadata"].value("name", "");
      if (watched.count(name)) out[name] = s.value("data", json::object());
    }
    EXPECT_EQ(out.size(), watched.size()) << "a watched Secret is missing";
    return out;
  }
  static std::map<std::string, std::string> Env(const std::map<std::string, json>& secrets,
                                                const std::string& backend) {
    std::map<std::string, std::string> env;
    const json& data = secrets.at(backend + "-pubsub-env");
    for (auto it = data.begin(); it != data.end(); ++it) {
      env[it.key()] = base64::Decode(it.value().get<std::string>()).value_or("");
    }
    return env;
  }

  // One sample of the NATS side: how many of the n users NATS accepts now
  // (IncludeFile: users in the included file; AuthCallout: backends whose
  // credentials authenticate), and in AuthCallout mode the server's config
  // load time.
  void SampleUsers() {
    int accepted = 0;
    if (!callout()) {
      accepted = CountUsers(file_nats->IncludeText());
    } else {
      for (const auto& [user, password] : credentials) {
        std::string why = Authenticate(url(), user, password);
        if (why.empty()) {
          accepted++;
          continue;
        }
        std::lock_guard lock(mu);
        if (refusals.size() < 10) refusals.push_back(user + ": " + why);
      }
      auto loaded = callout_nats->ConfigLoadTime();
      std::lock_guard lock(mu);
      if (loaded && *loaded != config_load_time) reloads.push_back(*loaded);
    }
    min_users = std::min(min_users.load(), accepted);
    samples++;
  }
  // One sample of the API side: every b* backend is Ready (nothing while
  // the API server is away).
  void SampleStatus() {
    for (const auto& b : ListBackends()) {
      const std::string name = b["metadata"].value("name", "");
      if (name.rfind("b", 0) == 0 && !IsReady(b)) {
        std::lock_guard lock(mu);
        not_ready.push_back(name + " " + b.value("status", json()).dump());
      }
    }
  }

  void ExtraBackendBecomesReady(const std::string& name) {
    Apply(BackendYaml(ns, name, ns, kServer, "hatchet." + name));
    EXPECT_TRUE(WaitReady(ns, name, "True", "", 120)) << Get("psb", ns, name).dump(2);
  }

  // (a) SIGKILL, then a new operator.
  void Sigkill(int n) {
    KillOperators();
    op = StartOperator();
    ASSERT_TRUE(Converged(*op, n)) << "(a)";
  }
  // (b) The leader dies, the standby takes over; then a new standby (what
  // the Deployment does with the killed pod).
  void Failover(int n) {
    KillOperators();
    op = StartOperator(LeaderElection("leader"));
    ASSERT_TRUE(Converged(*op, n)) << "(b) leader";
    standby = StartOperator(LeaderElection("standby"));
    ASSERT_TRUE(testing::WaitFor([&] { return standby->Healthy(); }, 30s));
    ASSERT_TRUE(op->process().Signal(SIGKILL));
    op->process().Wait(10s);
    ASSERT_TRUE(Converged(*standby, n)) << "(b) standby";
    op = std::move(standby);
    standby = StartOperator(LeaderElection("leader-again"));
    ASSERT_TRUE(testing::WaitFor([&] { return standby->Healthy(); }, 30s));
  }
  // (c) The API server restarts (same port). A leader that could not renew
  // within its deadline exits 1 (Lease lost); whoever is left, some replica
  // leads again and works.
  void ApiServerRestart(int n) {
    auto r = testing::Run({"bash", source_dir + "/scripts/cluster.sh", "restart-apiserver"},
                          {{"CLUSTER_DIR", cluster_dir}}, "", 120s);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    OperatorProcess* leader = nullptr;
    ASSERT_TRUE(testing::WaitFor(
        [&] {
          for (auto* p : {op.get(), standby.get()}) {
            if (p && p->process().running() && Leads(*p) && Reconciled(*p, n)) leader = p;
          }
          return leader != nullptr;
        },
        120s, 200ms))
        << "(c) no replica leads after the API server came back";
    for (auto* p : {op.get(), standby.get()}) {
      if (p && !p->process().running()) {
        std::cout << "(c) a replica lost the Lease and exited" << std::endl;
        EXPECT_EQ(p->process().Wait(0s), std::optional<int>(1))
            << "(c) a replica exited, and not for a lost Lease:\n"
            << LogTail(p->Log());
      }
    }
    if (leader != op.get()) std::swap(op, standby);
    ExtraBackendBecomesReady("extra-c");
  }
  // (d) A new operator, and the API server frozen before it could list.
  void ApiServerOutage(int n) {
    KillOperators();
    std::ifstream pidfile(cluster_dir + "/run/kube-apiserver.pid");
    pid_t apiserver = 0;
    pidfile >> apiserver;
    ASSERT_GT(apiserver, 0);
    op = StartOperator();
    {
      Frozen frozen(apiserver);
      // The point is the duration; and NATS was sampled meanwhile.
      const auto until = std::chrono::steady_clock::now() + 45s;
      const int before = samples.load();
      EXPECT_TRUE(testing::WaitFor(
          [&] { return std::chrono::steady_clock::now() >= until && samples.load() >= before + 2; },
          120s, 500ms))
          << "(d) fewer than 2 samples of NATS during the outage";
    }
    ASSERT_TRUE(Converged(*op, n)) << "(d)";
    ExtraBackendBecomesReady("extra-d");
  }

  std::unique_ptr<kube::Client> client;
  std::string ns;
  std::string source_dir, cluster_dir;
  std::unique_ptr<LocalNats> file_nats;            // IncludeFile
  testing::Process sync;                           // IncludeFile
  std::unique_ptr<CalloutNats> callout_nats;       // AuthCallout
  std::string config_load_time;                    // AuthCallout: at the start
  std::map<std::string, std::string> credentials;  // AuthCallout: user -> password, every b*
  std::unique_ptr<OperatorProcess> op;
  std::unique_ptr<OperatorProcess> standby;
  std::vector<std::unique_ptr<EngineConnection>> connections;
  std::atomic<int> min_users{1 << 30};
  std::atomic<int> samples{0};
  std::mutex mu;
  std::vector<std::string> not_ready;  // guarded by mu
  std::vector<std::string> refusals;   // guarded by mu
  std::vector<std::string> reloads;    // guarded by mu
  std::unique_ptr<Sampler> users_sampler;
  std::unique_ptr<Sampler> status_sampler;
};

TEST_P(OperatorOutageE2E, NoUserIsEverDroppedByRestartsFailoversOrAnAbsentApiServer) {
  const auto start = std::chrono::steady_clock::now();
  const int n = Backends();
  const char* src = std::getenv("SWITCHBOARD_SOURCE_DIR");
  const char* cdir = std::getenv("SWITCHBOARD_CLUSTER_DIR");
  ASSERT_TRUE(src && cdir);
  source_dir = src;
  cluster_dir = cdir;

  op = StartOperator();
  if (callout()) {
    Apply(CalloutServerYaml(ns, kServer, url(), {}));
    ASSERT_TRUE(callout_nats->StartServerFromSecret(60s)) << callout_nats->error();
    ASSERT_TRUE(callout_nats->StartAuthorizers(2, 60s)) << callout_nats->error();
    auto loaded = callout_nats->ConfigLoadTime();
    ASSERT_TRUE(loaded.has_value());
    config_load_time = *loaded;
  } else {
    Apply(NatsServerYaml(ns, kServer, url(), {}));
  }
  for (int i = 0; i < n; i++) CreateBackend(Name(i));
  ASSERT_TRUE(testing::WaitFor([&] { return ReadyCount() == n; }, 240s, 500ms))
      << "not all " << n << " backends became Ready";
  if (!callout()) {
    ASSERT_TRUE(testing::WaitFor([&] { return CountUsers(file_nats->IncludeText()) == n; }, 30s));
  }

  // The samples below can fail: NATS refuses a wrong password.
  EXPECT_NE(
      Authenticate(url(),
                   SecretData(ns, Name(0) + "-pubsub-env")["SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME"],
                   "not-the-password"),
      "");

  const auto secrets = WatchedSecrets(n);
  ASSERT_EQ(secrets.size(), static_cast<size_t>(2 * n + (callout() ? 2 : 0)));
  for (int i = 0; i < n; i++) {
    auto env = Env(secrets, Name(i));
    credentials[env["SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME"]] =
        env["SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD"];
    // One engine-like connection per 10 backends, with the env Secret's values.
    if (i % 10 == 0) {
      connections.push_back(std::make_unique<EngineConnection>(env));
      ASSERT_TRUE(connections.back()->ok()) << Name(i);
    }
  }
  users_sampler = std::make_unique<Sampler>(callout() ? 2s : 200ms, [this] { SampleUsers(); });
  status_sampler = std::make_unique<Sampler>(1s, [this] { SampleStatus(); });

  // Each phase's end goes to the log (what CI time it costs).
  auto phase = [&](const char* name, auto&& run) {
    run(n);
    std::cout << name << " done at "
              << std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() -
                                                                  start)
                     .count()
              << " s, " << samples.load() << " samples of NATS" << std::endl;
  };
  phase("setup: every backend Ready, engines connected", [](int) {});
  phase("(a) SIGKILL", [&](int k) { Sigkill(k); });
  if (HasFatalFailure()) return;
  phase("(b) failover", [&](int k) { Failover(k); });
  if (HasFatalFailure()) return;
  phase("(c) API server restart", [&](int k) { ApiServerRestart(k); });
  if (HasFatalFailure()) return;
  phase("(d) API server outage", [&](int k) { ApiServerOutage(k); });
  if (HasFatalFailure()) return;

  // One more sample after everything, then the verdict.
  const int last = samples.load();
  ASSERT_TRUE(testing::WaitFor([&] { return samples.load() > last; }, 120s));
  users_sampler.reset();
  status_sampler.reset();
  EXPECT_GT(samples.load(), 2);
  EXPECT_EQ(min_users.load(), n) << "a user was dropped (NATS accepted fewer than " << n << ")";
  if (callout()) {
    for (const std::string extra : {"extra-c", "extra-d"}) {
      auto env = SecretData(ns, extra + "-pubsub-env");
      EXPECT_EQ(Authenticate(url(), env["SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME"],
                             env["SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD"]),
                "")
          << extra;
    }
    EXPECT_EQ(callout_nats->ConfigLoadTime(), std::optional<std::string>(config_load_time));
  } else {
    EXPECT_GE(CountUsers(file_nats->IncludeText()), n + 2);
  }
  int disconnects = 0;
  for (const auto& c : connections) {
    disconnects += c->disconnects();
    EXPECT_TRUE(c->connected());
  }
  EXPECT_EQ(disconnects, 0) << "an engine connection was dropped";
  EXPECT_EQ(WatchedSecrets(n), secrets) << "a Secret changed";
  std::lock_guard lock(mu);
  EXPECT_TRUE(refusals.empty()) << refusals.size() << " refusals, first: " << refusals.front();
  EXPECT_TRUE(reloads.empty()) << "the server loaded its config again at " << reloads.front();
  EXPECT_TRUE(not_ready.empty()) << not_ready.size() << " observations of a backend not Ready, "
                                 << "first: " << not_ready.front();
}

// Both modes run every phase: a subset in AuthCallout mode would save little
// (the failover takes seconds; setup, the 45 s outage and teardown are the
// cost, and every phase needs them).
INSTANTIATE_TEST_SUITE_P(Modes, OperatorOutageE2E,
                         ::testing::Values(Mode::kIncludeFile, Mode::kAuthCallout), ModeName);

}  // namespace
}  // namespace switchboard::e2e
