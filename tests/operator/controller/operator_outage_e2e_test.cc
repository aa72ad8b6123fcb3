// What reaches NATS is a function of cluster state: with N backends Ready
// and engine-like connections open, no user is dropped, no connection is
// closed, no Secret changes and no backend leaves Ready=True while
//   (a) the operator is SIGKILLed and a new one starts,
//   (b) the leader dies and the standby takes over,
//   (c) the API server restarts (scripts/cluster.sh restart-apiserver),
//   (d) the operator restarts and the API server is then frozen (SIGSTOP)
//       for 45 s, longer than any wait in the operator (watch backoff max
//       30 s, lease 4 s here, probe timeout 2 s), before it comes back.
// In every provisioning mode (the test's parameter):
//   IncludeFile  nats-server including the rendered file, kept by
//                switchboard-config-sync: the file never has fewer than N
//                users.
//   AuthCallout  one nats-server-callout on the static config the operator
//                wrote (isolation Permissions: one callout account), two
//                switchboard-authorizer replicas: every backend's
//                credentials authenticate through the callout in every
//                sample, the callout Secret (issuer key included) and the
//                static config never change, and the server never loads
//                its config again (/varz config_load_time).
//   AuthCalloutAccounts  isolation Accounts (NATS operator mode): three
//                routed nats-server-callout on the operator-mode config,
//                each with its own full resolver store, two authorizers.
//                All of AuthCallout's checks (each credential tried on
//                another server in every sample, no server reloads, the
//                callout Secret with the operator-mode seeds unchanged),
//                and in every sample: no installation's account JWT leaves
//                any store, none is rewritten with other claims (the
//                same claims signed again are counted and printed, not
//                judged: a timed-out CLAIMS.LIST makes the operator push
//                again, harmlessly), every connection of an installation's user is
//                in the account its backend's status.account names (never
//                the auth account or another's) and every engine has one,
//                and no backend's status.account changes.
// Each phase ends with a sample of NATS taken after it. Losing the Lease in
// (c) is allowed (a restart longer than the renew deadline; the replica
// exits 1 and its Deployment would start it again): some replica leads
// again once the API server is back.
// Everything is real: kube-apiserver + etcd (fixture "cluster"), the
// binaries of this build. RUN_SERIAL: it restarts and freezes the shared API
// server.
//
// N: SWITCHBOARD_OUTAGE_BACKENDS (default 300 in every mode), one
// connection per 10.
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
#include "switchboard/testing/nats_accounts.h"
#include "switchboard/testing/objects.h"
#include "switchboard/testing/wait.h"

namespace switchboard::e2e {
namespace {

using namespace std::chrono_literals;

constexpr char kServer[] = "shared";

enum class Mode { kIncludeFile, kAuthCallout, kAuthCalloutAccounts };

std::string ModeName(const ::testing::TestParamInfo<Mode>& info) {
  switch (info.param) {
    case Mode::kIncludeFile:
      return "IncludeFile";
    case Mode::kAuthCallout:
      return "AuthCallout";
    case Mode::kAuthCalloutAccounts:
      return "AuthCalloutAccounts";
  }
  return "";
}

// SWITCHBOARD_OUTAGE_BACKENDS when set, else 300. Operator mode takes the
// same default: at 300 it ran in 175 s here (every backend Ready at 30 s,
// the four phases done at 124 s, then the namespace's deletion), beside
// IncludeFile's 109 s and AuthCallout's 146 s: within the 3 minutes a mode
// may add to CI, so no smaller N that would test less.
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

// `urls` (one URL, or a comma-separated seed list as a NatsServer's
// spec.url may be) as the servers nats.c tries: natsOptions_SetURL takes
// one URL only.
void SetUrls(natsOptions* opts, const std::string& urls) {
  std::vector<std::string> list;
  for (size_t at = 0; at <= urls.size();) {
    size_t comma = urls.find(',', at);
    if (comma == std::string::npos) comma = urls.size();
    list.push_back(urls.substr(at, comma - at));
    at = comma + 1;
  }
  std::vector<const char*> c;
  for (const auto& u : list) c.push_back(u.c_str());
  natsOptions_SetServers(opts, c.data(), static_cast<int>(c.size()));
}

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
    SetUrls(opts, url);
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
    SetUrls(opts_, env.at("SERVER_MSGQUEUE_PUBSUB_NATS_URL"));
    natsOptions_SetUserInfo(opts_, env.at("SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME").c_str(),
                            env.at("SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD").c_str());
    natsOptions_SetMaxReconnect(opts_, -1);
    natsOptions_SetDisconnectedCB(opts_, &EngineConnection::OnDisconnected, events_.get());
    natsOptions_SetClosedCB(opts_, &EngineConnection::OnClosed, events_.get());
    natsStatus s = natsConnection_Connect(&nc_, opts_);
    const std::string subject = env.at("SERVER_MSGQUEUE_PUBSUB_NATS_SUBJECT_PREFIX") + ".*";
    if (s == NATS_OK) s = natsConnection_SubscribeSync(&sub_, nc_, subject.c_str());
    if (s == NATS_OK) s = natsConnection_Flush(nc_);
    ok_ = s == NATS_OK;
    if (!ok_) error_ = std::string(natsStatus_GetText(s)) + ": " + nats_GetLastError(nullptr);
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
  const std::string& error() const { return error_; }  // why not ok()
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
  std::string error_;
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
      // Operator mode: three routed servers, each its own resolver store.
      CalloutNats::Options o;
      if (accounts()) o = {.size = 3, .isolation = "Accounts"};
      callout_nats = std::make_unique<CalloutNats>(ns, kServer, std::vector<std::string>{ns}, o);
    } else {
      file_nats = std::make_unique<LocalNats>();
      ASSERT_TRUE(file_nats->ok());
      sync = StartConfigSync(*file_nats, ns, std::string(kServer) + "-switchboard");
    }
  }
  // Everything that calls back into the fixture stops first: the samplers,
  // then the connections (whose destructor waits for nats.c's last
  // callback); then the operators, and the namespace goes without them
  // finalizing every backend.
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
    op.reset();
    standby.reset();
    if (!ns.empty()) AbandonNamespace(ns);
    callout_nats.reset();
    sync.Stop();
  }

  // Both AuthCallout isolations; operator mode (isolation Accounts) alone.
  bool callout() const { return GetParam() != Mode::kIncludeFile; }
  bool accounts() const { return GetParam() == Mode::kAuthCalloutAccounts; }
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
  // issuer's key pair; in operator mode the operator's, system account's,
  // auth users' and installation signing seeds too: operator_mode_keys.h)
  // and the static config. One list.
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
  // credentials authenticate, in operator mode each on a server of its own
  // that moves with every sample), and in AuthCallout mode every server's
  // config load time; in operator mode also the stores and the accounts
  // the connections are in (SampleAccounts).
  void SampleUsers() {
    int accepted = 0;
    if (!callout()) {
      accepted = CountUsers(file_nats->IncludeText());
    } else {
      const int servers = callout_nats->size();
      int k = samples.load();
      for (const auto& [user, password] : credentials) {
        const std::string at = servers == 1 ? url() : callout_nats->url(k++ % servers);
        std::string why = Authenticate(at, user, password);
        if (why.empty()) {
          accepted++;
          continue;
        }
        std::lock_guard lock(mu);
        if (refusals.size() < 10) refusals.push_back(user + " at " + at + ": " + why);
      }
      auto loaded = callout_nats->LoadTimes();
      std::lock_guard lock(mu);
      for (size_t i = 0; i < loaded.size(); i++) {
        if (loaded[i] && loaded[i] != load_times.at(i)) {
          reloads.push_back("server " + std::to_string(i) + " at " + *loaded[i]);
        }
      }
    }
    if (accounts()) SampleAccounts();
    min_users = std::min(min_users.load(), accepted);
    samples++;
  }

  // Operator mode, recorded once every backend is Ready: each server's
  // store (account -> the JWT, and its claims without iat and jti) and the
  // account each user's connections must be in.
  void RecordAccounts(int n) {
    auth_account = Get("natsserver", ns, kServer)["status"]["authCallout"].value("issuer", "");
    ASSERT_FALSE(auth_account.empty()) << Get("natsserver", ns, kServer).dump(2);
    std::set<std::string> distinct;
    for (const auto& b : ListBackends()) {
      const std::string name = b["metadata"].value("name", "");
      const std::string account = b.value("status", json::object()).value("account", "");
      ASSERT_EQ(account.size(), 56u) << name << ": " << b.value("status", json()).dump();
      ASSERT_EQ(account[0], 'A') << name << ": " << account;
      ASSERT_NE(account, auth_account) << name;
      ASSERT_TRUE(distinct.insert(account).second) << name << " shares account " << account;
      account_of_backend[name] = account;
    }
    ASSERT_EQ(account_of_backend.size(), static_cast<size_t>(n));
    // Pushed to every store (the full resolver shares what one server got).
    ASSERT_TRUE(testing::WaitFor(
        [&] {
          for (int i = 0; i < callout_nats->size(); i++) {
            auto held = StoredJwts(callout_nats->store(i));
            for (const auto& a : distinct) {
              if (!held.count(a)) return false;
            }
          }
          return true;
        },
        60s, 200ms))
        << "an installation's account is missing from a server's store";
    stored.assign(static_cast<size_t>(callout_nats->size()), {});
    for (int i = 0; i < callout_nats->size(); i++) {
      for (auto& [account, jwt] : StoredJwts(callout_nats->store(i))) {
        if (!distinct.count(account)) continue;
        const std::string claims = ClaimsOf(jwt);
        ASSERT_FALSE(claims.empty()) << "server " << i << "'s JWT of " << account << ": " << jwt;
        stored[static_cast<size_t>(i)][account] = {jwt, claims};
      }
    }
  }

  // Operator mode: no installation's account left any store or was
  // rewritten there (the same claims signed again count as a re-push,
  // other claims as a rewrite); every connection of an installation's user
  // is in that installation's account, and every engine has one there.
  void SampleAccounts() {
    std::vector<std::string> lost, rewritten;
    std::set<std::string> pushed_again;
    for (int i = 0; i < callout_nats->size(); i++) {
      const auto held = StoredJwts(callout_nats->store(i));
      for (const auto& [account, was] : stored.at(static_cast<size_t>(i))) {
        auto it = held.find(account);
        const std::string where = account + " in server " + std::to_string(i) + "'s store";
        if (it == held.end()) {
          lost.push_back(where);
        } else if (it->second != was.jwt) {
          // A file being written (no claims yet) is being signed again too.
          const std::string claims = ClaimsOf(it->second);
          if (claims.empty() || claims == was.claims) {
            pushed_again.insert(where);
          } else {
            rewritten.push_back(where + ": " + claims + " (was " + was.claims + ")");
          }
        }
      }
    }
    int unanswered = 0;
    const auto clients = Clients(callout_nats->nats(), &unanswered);
    std::vector<std::string> misplaced;
    std::map<std::string, int> engine_conns;  // user -> connections in its account
    for (const auto& c : clients) {
      auto want = account_of_user.find(c.user);
      if (want == account_of_user.end()) continue;
      if (c.account != want->second) {
        misplaced.push_back(c.user + " (cid " + std::to_string(c.cid) + ", server " +
                            std::to_string(c.server) + ") in account \"" + c.account + "\", not " +
                            want->second +
                            (c.account == auth_account ? " (the auth account)" : ""));
      } else {
        engine_conns[c.user]++;
      }
    }
    if (unanswered == 0) {
      for (const auto& user : engine_users) {
        if (!engine_conns.count(user)) misplaced.push_back(user + "'s engine is on no server");
      }
    }
    std::lock_guard lock(mu);
    auto keep = [](std::vector<std::string>& into, std::vector<std::string>& from) {
      for (auto& f : from) {
        if (into.size() < 10) into.push_back(std::move(f));
      }
    };
    keep(store_losses, lost);
    keep(store_rewrites, rewritten);
    keep(misplacements, misplaced);
    repushes.insert(pushed_again.begin(), pushed_again.end());
    connz_unanswered += unanswered;
  }
  // One sample of the API side: every b* backend is Ready and in
  // operator mode still names its account (nothing while the API server
  // is away).
  void SampleStatus() {
    for (const auto& b : ListBackends()) {
      const std::string name = b["metadata"].value("name", "");
      if (name.rfind("b", 0) != 0) continue;
      if (!IsReady(b)) {
        std::lock_guard lock(mu);
        not_ready.push_back(name + " " + b.value("status", json()).dump());
      }
      if (accounts()) {
        const std::string account = b.value("status", json::object()).value("account", "");
        if (account != account_of_backend.at(name)) {
          std::lock_guard lock(mu);
          account_changes.push_back(name + ": " + account + ", was " + account_of_backend.at(name));
        }
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
  std::unique_ptr<LocalNats> file_nats;                // IncludeFile
  testing::Process sync;                               // IncludeFile
  std::unique_ptr<CalloutNats> callout_nats;           // AuthCallout
  std::vector<std::optional<std::string>> load_times;  // AuthCallout: each server's, at the start
  std::map<std::string, std::string> credentials;      // AuthCallout: user -> password, every b*
  // Operator mode, set before the samplers start and only read by them.
  struct StoredAccount {
    std::string jwt, claims;  // claims: ClaimsOf(jwt)
  };
  std::vector<std::map<std::string, StoredAccount>> stored;  // by server, by account
  std::map<std::string, std::string> account_of_backend;     // status.account, every b*
  std::map<std::string, std::string> account_of_user;        // every b*'s user
  std::set<std::string> engine_users;
  std::string auth_account;
  std::unique_ptr<OperatorProcess> op;
  std::unique_ptr<OperatorProcess> standby;
  std::vector<std::unique_ptr<EngineConnection>> connections;
  std::atomic<int> min_users{1 << 30};
  std::atomic<int> samples{0};
  std::mutex mu;
  std::vector<std::string> not_ready;  // guarded by mu
  std::vector<std::string> refusals;   // guarded by mu
  std::vector<std::string> reloads;    // guarded by mu
  // Operator mode; guarded by mu.
  std::vector<std::string> store_losses, store_rewrites, misplacements, account_changes;
  std::set<std::string> repushes;
  int connz_unanswered = 0;
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
    Apply(callout_nats->ServerYaml());
    ASSERT_TRUE(callout_nats->StartServerFromSecret(60s)) << callout_nats->error();
    ASSERT_TRUE(callout_nats->StartAuthorizers(2, 60s)) << callout_nats->error();
    load_times = callout_nats->LoadTimes();
    for (const auto& t : load_times) ASSERT_TRUE(t.has_value());
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
  if (accounts()) {
    ASSERT_NO_FATAL_FAILURE(RecordAccounts(n));
  }
  for (int i = 0; i < n; i++) {
    auto env = Env(secrets, Name(i));
    const std::string user = env["SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME"];
    credentials[user] = env["SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD"];
    if (accounts()) account_of_user[user] = account_of_backend.at(Name(i));
    // One engine-like connection per 10 backends, with the env Secret's values.
    if (i % 10 == 0) {
      connections.push_back(std::make_unique<EngineConnection>(env));
      ASSERT_TRUE(connections.back()->ok()) << Name(i) << ": " << connections.back()->error();
      engine_users.insert(user);
    }
  }
  if (accounts()) {
    // Every engine is on some server, in its account, before the first
    // sample; and the samples can fail: a connection in another account
    // is seen.
    ASSERT_TRUE(testing::WaitFor(
        [&] {
          std::map<std::string, std::string> seen;
          for (const auto& c : Clients(callout_nats->nats())) seen[c.user] = c.account;
          for (const auto& user : engine_users) {
            if (!seen.count(user) || seen[user] != account_of_user[user]) return false;
          }
          return true;
        },
        30s, 200ms))
        << "an engine is not in its installation's account";
  }
  users_sampler = std::make_unique<Sampler>(callout() ? 2s : 200ms, [this] { SampleUsers(); });
  status_sampler = std::make_unique<Sampler>(1s, [this] { SampleStatus(); });

  // Each phase's end goes to the log (what CI time it costs). A phase
  // ends once a sample of NATS has ended after its last step: one shorter
  // than a sample (a SIGKILL and a new operator take a second) is seen too.
  auto phase = [&](const char* name, auto&& run) {
    run(n);
    const int ended = samples.load();
    EXPECT_TRUE(testing::WaitFor([&] { return samples.load() > ended; }, 120s, 50ms))
        << name << ": no sample of NATS after it";
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
    EXPECT_EQ(callout_nats->LoadTimes(), load_times);
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
  if (accounts()) {
    auto first = [](const std::vector<std::string>& v) { return v.empty() ? "" : v.front(); };
    EXPECT_TRUE(store_losses.empty())
        << "an installation's account left a store: " << first(store_losses);
    EXPECT_TRUE(store_rewrites.empty()) << "an installation's account was rewritten with other "
                                        << "claims: " << first(store_rewrites);
    EXPECT_TRUE(misplacements.empty())
        << "a connection outside its installation's account: " << first(misplacements);
    EXPECT_TRUE(account_changes.empty())
        << "a backend's status.account changed: " << first(account_changes);
    // An account signed again with the same claims was pushed though the
    // server held it (or dropped and pushed back between two samples, which
    // the checks above cannot see). Reported, not judged: the operator
    // pushes again, harmlessly, when a server's CLAIMS.LIST does not answer
    // within its timeout, which a loaded machine can cause, and a gate
    // gives the same verdict on every machine.
    std::cout << "operator mode: " << repushes.size()
              << " store entries signed again with the same claims"
              << (repushes.empty() ? "" : ", first: " + *repushes.begin()) << std::endl;
    std::cout << "operator mode: " << connz_unanswered << " connz requests unanswered" << std::endl;
    for (const std::string extra : {"extra-c", "extra-d"}) {
      const std::string account = Get("psb", ns, extra)["status"].value("account", "");
      EXPECT_EQ(account.size(), 56u) << extra;
      for (int i = 0; i < callout_nats->size(); i++) {
        EXPECT_TRUE(StoreHolds(callout_nats->store(i), account)) << extra << " on server " << i;
      }
    }
  }
}

// Every mode runs every phase: a subset in AuthCallout mode would save
// little (the failover takes seconds; setup, the 45 s outage and teardown
// are the cost, and every phase needs them).
INSTANTIATE_TEST_SUITE_P(Modes, OperatorOutageE2E,
                         ::testing::Values(Mode::kIncludeFile, Mode::kAuthCallout,
                                           Mode::kAuthCalloutAccounts),
                         ModeName);

}  // namespace
}  // namespace switchboard::e2e
