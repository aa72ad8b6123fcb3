// No callout request lost when NATS servers restart: three routed
// nats-server-callout processes on the operator's static config, two
// authorizer sessions (each given one server's URL as its only seed, so
// each has a different "home" server), and engine-like clients (user and
// password, reconnect forever, servers learned by gossip, as Hatchet's Go
// client) on one server. The engines' server and another one are stopped
// together (SIGTERM for the other, SIGKILL for the engines': see the round)
// and started again, 20 times: every engine reconnects each time and no
// connect is refused or times out, because every server has both
// authorizers subscribed locally.
//
// What would show a lost request: the server that waited for an answer
// logs "authentication error" (the callout's timeout, 5 s, is shorter than
// the engines' connect timeout) and the client retries; an answered
// refusal is a `denied` decision. Both are counted over every server's
// log (read before each restart truncates it) and both authorizers'
// decision counters.
#include <gtest/gtest.h>
#include <nats/nats.h>
#include <prometheus/registry.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "nats_handles.h"
#include "switchboard/api/constants.h"
#include "switchboard/authorizer/members.h"
#include "switchboard/authorizer/metrics.h"
#include "switchboard/authorizer/session.h"
#include "switchboard/natsauth/nkey.h"
#include "switchboard/testing/callout_config.h"
#include "switchboard/testing/nats_client.h"
#include "switchboard/testing/nats_cluster.h"
#include "switchboard/testing/served_server.h"
#include "switchboard/testing/tool_path.h"
#include "switchboard/testing/wait.h"

namespace switchboard::authorizer {
namespace {

namespace logic = operator_logic;
using namespace std::chrono_literals;
using nlohmann::json;
using switchboard::testing::WaitFor;

constexpr auto kDeadline = 20s;
constexpr int kEngines = 6;
constexpr int kRounds = 20;
constexpr char kAuthorizerPassword[] = "authorizer-pw";
constexpr char kSystemPassword[] = "system-pw";

// An engine's connection as Hatchet's Go client makes it: one URL, the
// others from the cluster's gossip, reconnect forever, a connect timeout
// longer than the server's callout timeout (so a lost request is timed
// out, and logged, by the server).
class Engine {
 public:
  Engine(const std::string& url, const std::string& user, const std::string& password) {
    natsOptions* raw = nullptr;
    if (natsOptions_Create(&raw) != NATS_OK) return;
    pubsub::internal::NatsOptionsPtr opts(raw);
    if (natsOptions_SetURL(opts.get(), url.c_str()) != NATS_OK ||
        natsOptions_SetUserInfo(opts.get(), user.c_str(), password.c_str()) != NATS_OK ||
        natsOptions_SetTimeout(opts.get(), 10000) != NATS_OK ||
        natsOptions_SetMaxReconnect(opts.get(), -1) != NATS_OK ||
        natsOptions_SetReconnectWait(opts.get(), 2000) != NATS_OK ||
        natsOptions_SetReconnectedCB(opts.get(), &Engine::OnReconnected, this) != NATS_OK ||
        natsOptions_SetErrorHandler(opts.get(), &Engine::OnError, this) != NATS_OK ||
        natsOptions_SetClosedCB(opts.get(), &Engine::OnClosed, this) != NATS_OK) {
      error_ = "setting options failed";
      return;
    }
    natsConnection* nc = nullptr;
    if (natsStatus s = natsConnection_Connect(&nc, opts.get()); s != NATS_OK) {
      const char* text = nats_GetLastError(nullptr);
      error_ = std::string(natsStatus_GetText(s)) + ": " + (text ? text : "");
      return;
    }
    nc_.reset(nc);
  }
  ~Engine() {
    if (!nc_) return;
    natsConnection_Close(nc_.get());
    EXPECT_TRUE(WaitFor([&] { return closed_.load(); }, kDeadline)) << "no closed callback";
    nc_.reset();
  }
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  bool connected() const {
    return nc_ && natsConnection_Status(nc_.get()) == NATS_CONN_STATUS_CONNECTED;
  }
  std::string server_id() const {
    char id[256] = {0};
    if (!nc_ || natsConnection_GetConnectedServerId(nc_.get(), id, sizeof id) != NATS_OK) return "";
    return id;
  }
  int reconnects() const { return reconnects_.load(); }
  bool closed() const { return closed_.load(); }
  const std::string& error() const { return error_; }
  std::vector<std::string> errors() const {
    std::lock_guard lock(mu_);
    return errors_;
  }

 private:
  static void OnReconnected(natsConnection*, void* closure) {
    static_cast<Engine*>(closure)->reconnects_++;
  }
  static void OnClosed(natsConnection*, void* closure) {
    static_cast<Engine*>(closure)->closed_ = true;
  }
  static void OnError(natsConnection* nc, natsSubscription*, natsStatus err, void* closure) {
    auto* self = static_cast<Engine*>(closure);
    const char* text = nullptr;
    natsConnection_GetLastError(nc, &text);
    std::lock_guard lock(self->mu_);
    self->errors_.push_back(std::string(natsStatus_GetText(err)) + ": " + (text ? text : ""));
  }

  pubsub::internal::NatsConnectionPtr nc_;
  std::string error_;
  std::atomic<int> reconnects_{0};
  std::atomic<bool> closed_{false};
  mutable std::mutex mu_;
  std::vector<std::string> errors_;  // guarded by mu_
};

double Decisions(prometheus::Registry& registry, const std::string& result) {
  double sum = 0;
  for (const auto& f : registry.Collect()) {
    if (f.name != "switchboard_authorizer_decisions_total") continue;
    for (const auto& m : f.metric) {
      for (const auto& l : m.label) {
        if (l.name == "result" && l.value == result) sum += m.counter.value;
      }
    }
  }
  return sum;
}

double Gauge(prometheus::Registry& registry, const std::string& family) {
  double sum = 0;
  for (const auto& f : registry.Collect()) {
    if (f.name != family) continue;
    for (const auto& m : f.metric) sum += m.gauge.value;
  }
  return sum;
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) n++;
  return n;
}

class CalloutRestartTest : public switchboard::testing::NatsLibraryTest {
 protected:
  void SetUp() override {
    tool_ = switchboard::testing::ToolPath("nats-server-callout");
    ASSERT_EQ(access(tool_.c_str(), X_OK), 0)
        << tool_ << " is missing: build it with `bash scripts/build-tools.sh nats-server-callout`";
    auto issuer = natsauth::KeyPair::Generate(natsauth::KeyType::kAccount);
    ASSERT_TRUE(issuer.ok());
    issuer_ = std::make_shared<const natsauth::KeyPair>(std::move(issuer).value());
  }

  std::shared_ptr<const ServedServer> Served(const std::string& seeds) {
    std::vector<logic::DirectoryEntry> engines;
    for (int i = 0; i < kEngines; i++) {
      engines.push_back(switchboard::testing::DirectoryUser("engine-" + std::to_string(i),
                                                            "pw-" + std::to_string(i),
                                                            "hatchet.e" + std::to_string(i)));
    }
    return switchboard::testing::MakeServedServer({.urls = seeds,
                                                   .issuer = issuer_,
                                                   .authorizer_password = kAuthorizerPassword,
                                                   .system_password = kSystemPassword},
                                                  engines);
  }

  std::string tool_;
  std::shared_ptr<const natsauth::KeyPair> issuer_;
};

// Local subscribers on the callout subject of server i (subsz lists the
// server's own clients' subscriptions, not the interest its routes carry).
int LocalAuthorizers(const switchboard::testing::NatsCluster& cluster, int i) {
  json subsz = cluster.Monitor(i, "subsz?subs=1&acc=" + std::string(api::kCalloutAuthAccount) +
                                      "&test=%24SYS.REQ.USER.AUTH");
  if (!subsz.is_object()) return -1;
  return static_cast<int>(subsz.value("subscriptions_list", json::array()).size());
}

TEST_F(CalloutRestartTest, EnginesReconnectWithoutALostRequestWhileServersRestart) {
  auto config = switchboard::testing::CalloutConfig({.issuer = issuer_->public_key(),
                                                     .authorizer_password = kAuthorizerPassword,
                                                     .system_password = kSystemPassword});
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  switchboard::testing::NatsCluster cluster({.size = 3, .binary = tool_});
  // debug: the server logs a callout request nobody answered ("not
  // received in time") only at debug level.
  ASSERT_TRUE(cluster.Start(*config + "\ndebug: true\n")) << cluster.error();

  SessionOptions options;
  options.reconnect_wait = 250ms;
  options.gather_wait = 300ms;
  Metrics ma(std::make_shared<prometheus::Registry>());
  Metrics mb(std::make_shared<prometheus::Registry>());
  // Each authorizer knows one server only; the others it learns from them.
  ServerSession a(Served(cluster.url(1)), options, &ma);
  ServerSession b(Served(cluster.url(0)), options, &mb);

  // Both authorizers on every running server, each by a connection of its
  // own there (two local subscribers per server), and ready.
  auto everywhere = [&] {
    for (int i = 0; i < cluster.size(); i++) {
      if (LocalAuthorizers(cluster, i) != 2) return false;
    }
    return a.Health().servers == 3 && b.Health().servers == 3 && a.Health().subscribed &&
           b.Health().subscribed;
  };
  ASSERT_TRUE(WaitFor(everywhere, kDeadline))
      << "subscribers: " << LocalAuthorizers(cluster, 0) << " " << LocalAuthorizers(cluster, 1)
      << " " << LocalAuthorizers(cluster, 2) << "; a on " << a.Health().servers << ", b on "
      << b.Health().servers << " servers";

  std::vector<std::unique_ptr<Engine>> engines;
  for (int i = 0; i < kEngines; i++) {
    engines.push_back(std::make_unique<Engine>(cluster.url(0), "engine-" + std::to_string(i),
                                               "pw-" + std::to_string(i)));
    ASSERT_TRUE(engines.back()->connected()) << engines.back()->error();
  }

  auto server_id = [&](int i) { return cluster.Monitor(i, "varz").value("server_id", ""); };
  size_t auth_errors = 0;
  std::string auth_error_lines;
  auto count_auth_errors = [&](int i) {
    const std::string log = cluster.Log(i);
    const size_t n = Count(log, "not received in time") + Count(log, "authentication error") +
                     Count(log, "Authorization Violation");
    auth_errors += n;
    if (n) auth_error_lines += cluster.server_name(i) + ":\n" + log;
  };

  int engines_on = 0;  // where every engine is
  for (int round = 0; round < kRounds; round++) {
    SCOPED_TRACE("round " + std::to_string(round));
    const int other = (engines_on + 1) % 3, survivor = (engines_on + 2) % 3;
    std::vector<int> before;
    for (const auto& e : engines) before.push_back(e->reconnects());

    // Both down together: the engines' server and another (an
    // authorizer's seed, every second round). The other one goes first, so
    // that the engines reconnect while both are down: a connect that
    // reaches a server in the middle of its shutdown is cut by it (the
    // client sees its connection closed and tries the next server).
    //
    // The engines' server is killed: on SIGTERM nats-server closes its
    // clients before its routes, and a survivor that has not yet seen the
    // route go may hand a reconnecting engine's request to the authorizers
    // of the server going down (nats-server picks a queue member across a
    // route as readily as a local one: client.go, processMsgResults), where
    // it is lost with that server. That window is the server's, not the
    // authorizers' (docs/auth-callout.md, "Availability"); SIGKILL closes
    // both at once.
    cluster.StopServer(other);
    cluster.KillServer(engines_on);
    count_auth_errors(engines_on);
    count_auth_errors(other);

    const std::string survivor_id = server_id(survivor);
    ASSERT_FALSE(survivor_id.empty());
    ASSERT_TRUE(WaitFor(
        [&] {
          for (size_t i = 0; i < engines.size(); i++) {
            if (engines[i]->reconnects() <= before[i] || !engines[i]->connected() ||
                engines[i]->server_id() != survivor_id) {
              return false;
            }
          }
          return true;
        },
        kDeadline))
        << "an engine did not reconnect to " << cluster.server_name(survivor);

    ASSERT_TRUE(cluster.StartServer(engines_on)) << cluster.error();
    ASSERT_TRUE(cluster.StartServer(other)) << cluster.error();
    ASSERT_TRUE(WaitFor(everywhere, kDeadline))
        << "subscribers: " << LocalAuthorizers(cluster, 0) << " " << LocalAuthorizers(cluster, 1)
        << " " << LocalAuthorizers(cluster, 2);
    // Each member is back on the server of its own URL (pinned: nats.c
    // never moved it to another server of the cluster), one per server.
    for (ServerSession* session : {&a, &b}) {
      const SessionHealth h = session->Health();
      ASSERT_EQ(h.members.size(), 3u);
      for (const auto& m : h.members) {
        int at = -1;
        for (int i = 0; i < cluster.size(); i++) {
          if (HostPort(m.url) == HostPort(cluster.url(i))) at = i;
        }
        ASSERT_GE(at, 0) << m.url;
        EXPECT_EQ(m.server_id, server_id(at)) << m.url;
      }
    }
    engines_on = survivor;
  }
  for (int i = 0; i < cluster.size(); i++) count_auth_errors(i);

  EXPECT_EQ(auth_errors, 0u) << auth_error_lines;
  EXPECT_EQ(Decisions(*ma.registry(), "denied") + Decisions(*mb.registry(), "denied"), 0);
  EXPECT_EQ(Decisions(*ma.registry(), "invalid") + Decisions(*mb.registry(), "invalid"), 0);
  EXPECT_EQ(Decisions(*ma.registry(), "dropped") + Decisions(*mb.registry(), "dropped"), 0);
  // Every connect and reconnect was answered: at least one decision each
  // (a server stopping in the middle of a handshake it had asked about
  // makes the client try the next server: one decision more).
  int reconnects = 0;
  for (const auto& e : engines) {
    EXPECT_FALSE(e->closed());
    EXPECT_TRUE(e->errors().empty()) << e->errors().front();
    EXPECT_GE(e->reconnects(), kRounds);
    reconnects += e->reconnects();
  }
  EXPECT_GE(Decisions(*ma.registry(), "allowed") + Decisions(*mb.registry(), "allowed"),
            kEngines + reconnects);
  // The gauge follows at the sessions' next look (a second at most).
  for (Metrics* m : {&ma, &mb}) {
    EXPECT_TRUE(WaitFor(
        [&] { return Gauge(*m->registry(), "switchboard_authorizer_subscribed_servers") == 3; },
        kDeadline))
        << Gauge(*m->registry(), "switchboard_authorizer_subscribed_servers");
  }
  // Both served requests: the decisions are not one replica's alone.
  EXPECT_GT(Decisions(*ma.registry(), "allowed"), 0);
  EXPECT_GT(Decisions(*mb.registry(), "allowed"), 0);
}

// A server that joins the cluster is picked up from the servers'
// announcements, and one that leaves for good is dropped after
// forget_server_after; the seed alone is enough.
TEST_F(CalloutRestartTest, ServersThatJoinArePickedUpAndServersThatLeaveAreDropped) {
  auto config = switchboard::testing::CalloutConfig({.issuer = issuer_->public_key(),
                                                     .authorizer_password = kAuthorizerPassword,
                                                     .system_password = kSystemPassword});
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  switchboard::testing::NatsCluster cluster({.size = 3, .binary = tool_});
  ASSERT_TRUE(cluster.Start(*config)) << cluster.error();
  cluster.StopServer(2);
  ASSERT_TRUE(cluster.WaitRouted(kDeadline)) << cluster.error();

  SessionOptions options;
  options.reconnect_wait = 250ms;
  options.gather_wait = 300ms;
  options.forget_server_after = 500ms;
  ServerSession session(Served(cluster.url(0)), options, nullptr);
  auto members = [&] {
    std::set<std::string> urls;
    for (const auto& m : session.Health().members) urls.insert(HostPort(m.url));
    return urls;
  };
  const std::set<std::string> two = {HostPort(cluster.url(0)), HostPort(cluster.url(1))};
  const std::set<std::string> three = {HostPort(cluster.url(0)), HostPort(cluster.url(1)),
                                       HostPort(cluster.url(2))};
  ASSERT_TRUE(WaitFor([&] { return session.Health().servers == 2 && members() == two; }, kDeadline))
      << session.Health().servers << " servers, " << members().size() << " members";

  ASSERT_TRUE(cluster.StartServer(2)) << cluster.error();
  EXPECT_TRUE(
      WaitFor([&] { return session.Health().servers == 3 && members() == three; }, kDeadline))
      << session.Health().servers << " servers, " << members().size() << " members";
  EXPECT_TRUE(WaitFor([&] { return LocalAuthorizers(cluster, 2) == 1; }, kDeadline));

  cluster.StopServer(2);
  EXPECT_TRUE(WaitFor([&] { return session.Health().servers == 2 && members() == two; }, kDeadline))
      << session.Health().servers << " servers, " << members().size() << " members";
}

}  // namespace
}  // namespace switchboard::authorizer
