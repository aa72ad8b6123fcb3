// The rendered NATS config is a function of cluster state (issue 9 item 8):
// with N backends Ready and engine-like connections open, the file the
// nats-server includes never loses a user, no connection is dropped, no
// password changes and no backend leaves Ready=True while
//   (a) the operator is SIGKILLed and a new one starts,
//   (b) the leader dies and the standby takes over,
//   (c) the API server restarts (scripts/cluster.sh restart-apiserver),
//   (d) the operator restarts and the API server is then frozen (SIGSTOP)
//       for 45 s, longer than any wait in the operator (watch backoff max
//       30 s, lease 4 s here, probe timeout 2 s), before it comes back.
// Everything is real: kube-apiserver + etcd (fixture "cluster"), nats-server
// including the rendered file, switchboard-config-sync, the operator binary.
// RUN_SERIAL: it restarts and freezes the shared API server.
//
// N: SWITCHBOARD_OUTAGE_BACKENDS (default 300), one connection per 10.
#include <gtest/gtest.h>
#include <nats/nats.h>
#include <signal.h>

#include <atomic>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>

#include "e2e_harness.h"
#include "switchboard/kube/client.h"
#include "switchboard/kube/config.h"
#include "switchboard/testing/wait.h"

namespace switchboard::e2e {
namespace {

using namespace std::chrono_literals;

int Backends() {
  const char* n = std::getenv("SWITCHBOARD_OUTAGE_BACKENDS");
  return n && std::atoi(n) > 0 ? std::atoi(n) : 300;
}

int CountUsers(const std::string& text) {
  int n = 0;
  for (size_t pos = 0; (pos = text.find("{user: \"", pos)) != std::string::npos; pos++) n++;
  return n;
}

// Sum of the samples of one metric whose labels contain `label`.
double MetricSum(const std::string& text, const std::string& name, const std::string& label) {
  double sum = 0;
  size_t pos = 0;
  while ((pos = text.find(name + "{", pos)) != std::string::npos) {
    size_t end = text.find('\n', pos);
    std::string line = text.substr(pos, end - pos);
    pos = end;
    if (line.find(label) == std::string::npos) continue;
    sum += std::atof(line.substr(line.rfind(' ') + 1).c_str());
  }
  return sum;
}

// An engine-like NATS connection: the env Secret's credentials, reconnect
// forever, a subscription on its prefix. Counts every disconnect.
class EngineConnection {
 public:
  EngineConnection(const std::map<std::string, std::string>& env, std::atomic<int>* disconnects)
      : disconnects_(disconnects) {
    natsOptions_Create(&opts_);
    natsOptions_SetURL(opts_, env.at("SERVER_MSGQUEUE_PUBSUB_NATS_URL").c_str());
    natsOptions_SetUserInfo(opts_, env.at("SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME").c_str(),
                            env.at("SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD").c_str());
    natsOptions_SetMaxReconnect(opts_, -1);
    natsOptions_SetDisconnectedCB(opts_, &EngineConnection::OnDisconnect, this);
    natsOptions_SetClosedCB(opts_, &EngineConnection::OnDisconnect, this);
    ok_ = natsConnection_Connect(&nc_, opts_) == NATS_OK;
    const std::string subject = env.at("SERVER_MSGQUEUE_PUBSUB_NATS_SUBJECT_PREFIX") + ".*";
    ok_ = ok_ && natsConnection_SubscribeSync(&sub_, nc_, subject.c_str()) == NATS_OK &&
          natsConnection_Flush(nc_) == NATS_OK;
  }
  ~EngineConnection() {
    if (sub_) natsSubscription_Destroy(sub_);
    if (nc_) {
      closing_ = true;
      natsConnection_Destroy(nc_);
    }
    natsOptions_Destroy(opts_);
  }
  bool ok() const { return ok_; }
  bool connected() const { return nc_ && natsConnection_Status(nc_) == NATS_CONN_STATUS_CONNECTED; }

 private:
  static void OnDisconnect(natsConnection*, void* self) {
    auto* c = static_cast<EngineConnection*>(self);
    if (!c->closing_) c->disconnects_->fetch_add(1);
  }
  std::atomic<int>* disconnects_;
  std::atomic<bool> closing_{false};
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

class OperatorOutageE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(Kubeconfig().empty()) << "run through ctest (fixture cluster)";
    auto cfg = kube::Config::FromKubeconfig(Kubeconfig());
    ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
    auto c = kube::Client::New(*cfg);
    ASSERT_TRUE(c.ok());
    client = std::move(c).value();
    ns = UniqueName("op-outage");
    CreateNamespace(ns);
    nats = std::make_unique<LocalNats>();
    ASSERT_TRUE(nats->ok());
    sync = StartConfigSync(*nats, ns, "shared-switchboard");
  }
  void TearDown() override {
    stop_checker = true;
    if (checker.joinable()) checker.join();
    if (HasFailure() && op) std::cerr << "operator log (tail):\n" << Tail(op->Log()) << "\n";
    connections.clear();
    if (!ns.empty()) DeleteNamespace(ns);
    op.reset();
    standby.reset();
    sync.Stop();
  }
  static std::string Tail(const std::string& s) {
    return s.size() > 6000 ? s.substr(s.size() - 6000) : s;
  }

  std::unique_ptr<OperatorProcess> StartOperator(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"--probe-interval", "5m", "--workers", "8"};
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<OperatorProcess>(std::vector<std::string>{ns}, args);
  }
  // The process synced its caches and reconciled every backend and the server.
  bool Converged(OperatorProcess& p, int backends) {
    return testing::WaitFor(
        [&] {
          std::string m = p.Metrics();
          return MetricSum(m, "switchboard_reconcile_total", "kind=\"PubSubBackend\"") >=
                     backends &&
                 MetricSum(m, "switchboard_reconcile_total", "kind=\"NatsServer\"") >= 1;
        },
        120s);
  }

  std::vector<json> ListBackends() {
    auto list = client->ListAll(kube::resources::PubSubBackend(), ns);
    if (!list.ok()) return {};
    return (*list)["items"].get<std::vector<json>>();
  }
  static bool IsReady(const json& b) {
    auto st = b.find("status");
    if (st == b.end() || !st->is_object()) return false;
    for (const auto& c : st->value("conditions", json::array())) {
      if (c.value("type", "") == "Ready") return c.value("status", "") == "True";
    }
    return false;
  }
  std::map<std::string, std::map<std::string, std::string>> Passwords(int n) {
    std::map<std::string, std::map<std::string, std::string>> out;
    for (int i = 0; i < n; i++) {
      std::string name = "b" + std::to_string(i);
      out[name + "-pubsub-env"] = SecretData(ns, name + "-pubsub-env");
      auto creds = SecretData(ns, name + "-nats-credentials");
      out[name + "-creds"] = {{"password", creds["password"]}, {"bcrypt", creds["bcrypt"]}};
    }
    return out;
  }

  // Watches the invariants every 200 ms (file) and every second (status).
  void StartChecker(int n) {
    checker = std::thread([this, n] {
      auto last_status = std::chrono::steady_clock::now();
      while (!stop_checker) {
        int users = CountUsers(nats->IncludeText());
        min_users = std::min(min_users.load(), users);
        if (std::chrono::steady_clock::now() - last_status > 1s) {
          last_status = std::chrono::steady_clock::now();
          for (const auto& b : ListBackends()) {  // empty while the API server is away
            if (b["metadata"]["name"].get<std::string>().rfind("b", 0) == 0 && !IsReady(b)) {
              std::lock_guard lock(mu);
              not_ready.push_back(b["metadata"]["name"].get<std::string>() + " " +
                                  b.value("status", json()).dump());
            }
          }
        }
        std::this_thread::sleep_for(200ms);
      }
      (void)n;
    });
  }

  void ExtraBackendBecomesReady(const std::string& name) {
    Apply(BackendYaml(ns, name, ns, "shared", "hatchet." + name));
    EXPECT_TRUE(WaitReady(ns, name, "True", "", 120)) << Get("psb", ns, name).dump(2);
  }

  std::unique_ptr<kube::Client> client;
  std::string ns;
  std::unique_ptr<LocalNats> nats;
  testing::Process sync;
  std::unique_ptr<OperatorProcess> op;
  std::unique_ptr<OperatorProcess> standby;
  std::vector<std::unique_ptr<EngineConnection>> connections;
  std::atomic<int> disconnects{0};
  std::atomic<int> min_users{1 << 30};
  std::atomic<bool> stop_checker{false};
  std::mutex mu;
  std::vector<std::string> not_ready;  // guarded by mu
  std::thread checker;
};

TEST_F(OperatorOutageE2E, NoUserIsEverDroppedByRestartsFailoversOrAnAbsentApiServer) {
  const int n = Backends();
  op = StartOperator();
  Apply(NatsServerYaml(ns, "shared", nats->url(), {}));
  for (int i = 0; i < n; i++) {
    const std::string name = "b" + std::to_string(i);
    json b = {
        {"apiVersion", "pubsub.switchboard.dev/v1alpha1"},
        {"kind", "PubSubBackend"},
        {"metadata", {{"name", name}, {"namespace", ns}}},
        {"spec",
         {{"kind", "nats"},
          {"nats", {{"serverRef", {{"name", "shared"}}}, {"subjectPrefix", "hatchet." + name}}}}}};
    auto r = client->Create(kube::resources::PubSubBackend(), b);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        int ready = 0;
        for (const auto& b : ListBackends()) ready += IsReady(b) ? 1 : 0;
        return ready == n;
      },
      240s))
      << "not all " << n << " backends became Ready";
  ASSERT_TRUE(testing::WaitFor([&] { return CountUsers(nats->IncludeText()) == n; }, 30s));

  // One engine-like connection per 10 backends, with the env Secret's values.
  for (int i = 0; i < n; i += 10) {
    auto env = SecretData(ns, "b" + std::to_string(i) + "-pubsub-env");
    connections.push_back(std::make_unique<EngineConnection>(env, &disconnects));
    ASSERT_TRUE(connections.back()->ok()) << "b" << i;
  }
  const auto passwords = Passwords(n);
  StartChecker(n);

  // (a) SIGKILL, then a new operator.
  ASSERT_TRUE(op->process().Signal(SIGKILL));
  op->process().Wait(10s);
  op = StartOperator();
  ASSERT_TRUE(Converged(*op, n)) << "(a) " << Tail(op->Log());

  // (b) Leader election: the leader dies, the standby takes over.
  ASSERT_TRUE(op->process().Signal(SIGKILL));
  op->process().Wait(10s);
  const std::vector<std::string> le = {"--leader-elect",
                                       "--lease-namespace",
                                       ns,
                                       "--lease-duration",
                                       "4s",
                                       "--renew-deadline",
                                       "3s",
                                       "--retry-period",
                                       "1s"};
  auto with_id = [&](const std::string& id) {
    auto a = le;
    a.insert(a.end(), {"--identity", id});
    return a;
  };
  op = StartOperator(with_id("leader"));
  ASSERT_TRUE(Converged(*op, n)) << "(b) leader " << Tail(op->Log());
  standby = StartOperator(with_id("standby"));
  ASSERT_TRUE(testing::WaitFor([&] { return standby->Healthy(); }, 30s));
  ASSERT_TRUE(op->process().Signal(SIGKILL));
  op->process().Wait(10s);
  ASSERT_TRUE(Converged(*standby, n)) << "(b) standby " << Tail(standby->Log());
  op = std::move(standby);

  // (c) The API server restarts (same port).
  const char* src = std::getenv("SWITCHBOARD_SOURCE_DIR");
  const char* cluster_dir = std::getenv("SWITCHBOARD_CLUSTER_DIR");
  ASSERT_TRUE(src && cluster_dir);
  auto r = testing::Run({"bash", std::string(src) + "/scripts/cluster.sh", "restart-apiserver"},
                        {{"CLUSTER_DIR", cluster_dir}}, "", 120s);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExtraBackendBecomesReady("extra-c");

  // (d) A new operator, and the API server frozen before it could list.
  ASSERT_TRUE(op->process().Signal(SIGKILL));
  op->process().Wait(10s);
  std::ifstream pidfile(std::string(cluster_dir) + "/run/kube-apiserver.pid");
  pid_t apiserver = 0;
  pidfile >> apiserver;
  ASSERT_GT(apiserver, 0);
  op = StartOperator();
  {
    Frozen frozen(apiserver);
    // 45 s of nothing: no condition to wait for, the point is the duration.
    std::this_thread::sleep_for(45s);
  }
  ASSERT_TRUE(Converged(*op, n)) << "(d) " << Tail(op->Log());
  ExtraBackendBecomesReady("extra-d");

  stop_checker = true;
  checker.join();
  EXPECT_EQ(min_users.load(), n) << "users in the rendered file dropped below " << n;
  EXPECT_GE(CountUsers(nats->IncludeText()), n + 2);
  EXPECT_EQ(disconnects.load(), 0) << "an engine connection was dropped";
  for (const auto& c : connections) EXPECT_TRUE(c->connected());
  EXPECT_EQ(Passwords(n), passwords) << "a password or hash changed";
  std::lock_guard lock(mu);
  EXPECT_TRUE(not_ready.empty()) << not_ready.size() << " observations of a backend not Ready, "
                                 << "first: " << not_ready.front();
}

}  // namespace
}  // namespace switchboard::e2e
