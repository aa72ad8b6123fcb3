// switchboard-authorizer against the real kube-apiserver (fixture
// "cluster") and a real nats-server in auth callout mode: the binary
// authorizes a user from a PubSubBackend and its credentials Secret, both
// created here directly (no operator runs), refuses it and closes its
// connection once the credentials Secret is gone, and exits 0 on SIGTERM.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <nats/nats.h>
#include <signal.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>

#include "nats_handles.h"
#include "nats_library.h"
#include "switchboard/api/constants.h"
#include "switchboard/common/base64.h"
#include "switchboard/natsauth/nkey.h"
#include "switchboard/operator_logic/callout.h"
#include "switchboard/operator_logic/credentials.h"
#include "switchboard/operator_logic/objects.h"
#include "switchboard/operator_logic/rotation.h"
#include "switchboard/pubsub/nats_pubsub.h"
#include "switchboard/testing/callout_config.h"
#include "switchboard/testing/e2e_harness.h"
#include "switchboard/testing/nats_server.h"
#include "switchboard/testing/net.h"
#include "switchboard/testing/tool_path.h"
#include "switchboard/testing/wait.h"

namespace switchboard::e2e {
namespace {

namespace logic = operator_logic;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr auto kDeadline = 30s;

// An owned, managed-by Secret as the operator writes it.
json OwnedSecret(const std::string& ns, const std::string& name, const json& owner,
                 const logic::SecretData& data) {
  json d = json::object();
  for (const auto& [k, v] : data) d[k] = base64::Encode(v);
  return {
      {"apiVersion", "v1"},
      {"kind", "Secret"},
      {"metadata",
       {{"name", name},
        {"namespace", ns},
        {"labels", {{std::string(logic::kManagedByLabel), std::string(logic::kManagedByValue)}}},
        {"ownerReferences", json::array({{{"apiVersion", owner.value("apiVersion", "")},
                                          {"kind", owner.value("kind", "")},
                                          {"name", owner["metadata"].value("name", "")},
                                          {"uid", owner["metadata"].value("uid", "")},
                                          {"controller", true}}})}}},
      {"type", "Opaque"},
      {"data", d}};
}

// An engine-like client: no reconnects; records its closing.
class Engine {
 public:
  Engine(const std::string& url, const std::string& user, const std::string& password) {
    natsOptions* raw = nullptr;
    if (natsOptions_Create(&raw) != NATS_OK) return;
    pubsub::internal::NatsOptionsPtr opts(raw);
    natsConnection* nc = nullptr;
    if (natsOptions_SetURL(opts.get(), url.c_str()) != NATS_OK ||
        natsOptions_SetUserInfo(opts.get(), user.c_str(), password.c_str()) != NATS_OK ||
        natsOptions_SetAllowReconnect(opts.get(), false) != NATS_OK ||
        natsOptions_SetClosedCB(opts.get(), &Engine::OnClosed, this) != NATS_OK) {
      return;
    }
    natsStatus s = natsConnection_Connect(&nc, opts.get());
    if (s != NATS_OK) {
      const char* text = nats_GetLastError(nullptr);
      error_ = text ? text : natsStatus_GetText(s);
      return;
    }
    nc_.reset(nc);
  }
  ~Engine() {
    if (!nc_) return;
    natsConnection_Close(nc_.get());
    EXPECT_TRUE(WaitClosed());
    nc_.reset();
  }
  bool connected() const { return nc_ != nullptr; }
  const std::string& error() const { return error_; }
  // Subscribe, publish, receive on `subject`.
  bool RoundTrip(const std::string& subject) {
    natsSubscription* raw = nullptr;
    if (natsConnection_SubscribeSync(&raw, nc_.get(), subject.c_str()) != NATS_OK) return false;
    pubsub::internal::NatsSubscriptionPtr sub(raw);
    if (natsConnection_PublishString(nc_.get(), subject.c_str(), "ping") != NATS_OK) return false;
    natsMsg* msg = nullptr;
    if (natsSubscription_NextMsg(&msg, sub.get(), 10000) != NATS_OK) return false;
    natsMsg_Destroy(msg);
    return true;
  }
  bool WaitClosed() {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, kDeadline, [&] { return closed_; });
  }

 private:
  static void OnClosed(natsConnection*, void* closure) {
    auto* self = static_cast<Engine*>(closure);
    std::lock_guard lock(self->mu_);
    self->closed_ = true;
    self->cv_.notify_all();
  }
  pubsub::internal::NatsConnectionPtr nc_;
  std::string error_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false;
};

TEST(AuthorizerE2E, AuthorizesABackendsUserAndClosesItOnceItsSecretIsGone) {
  pubsub::internal::NatsLibraryUse library;
  const std::string ns = UniqueName("authz");
  CreateNamespace(ns);

  // The callout keys, as the operator would generate them.
  auto issuer = natsauth::KeyPair::Generate(natsauth::KeyType::kAccount);
  ASSERT_TRUE(issuer.ok());
  logic::CalloutKeys keys;
  keys.issuer_seed = issuer->Seed();
  keys.issuer = issuer->public_key();
  keys.authorizer = {.username = std::string(api::kAuthorizerUsername),
                     .password = *logic::GeneratePassword(),
                     .bcrypt = ""};
  keys.authorizer.bcrypt = *logic::BcryptHash(keys.authorizer.password, 4);
  keys.system = {.username = std::string(api::kCalloutSystemUsername),
                 .password = *logic::GeneratePassword(),
                 .bcrypt = ""};
  keys.system.bcrypt = *logic::BcryptHash(keys.system.password, 4);

  const std::string tool = switchboard::testing::ToolPath("nats-server-callout");
  ASSERT_EQ(access(tool.c_str(), X_OK), 0) << tool << " is missing";
  auto config = testing::CalloutConfig({.issuer = issuer->public_key(),
                                        .authorizer_password = keys.authorizer.password,
                                        .system_password = keys.system.password,
                                        .server_ns = ns,
                                        .server_name = "nats"});
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  testing::NatsServer nats(*config, 0, tool);
  ASSERT_TRUE(nats.ok()) << nats.Log();

  Apply(NatsServerYaml(ns, "nats", nats.url(), {}) + "  provisioning:\n    mode: AuthCallout\n");
  json server = Get("natsserver", ns, "nats");
  ASSERT_TRUE(server.is_object());
  ASSERT_EQ(server["spec"]["provisioning"].value("mode", ""), "AuthCallout") << server;
  Apply(OwnedSecret(ns, "nats-auth-callout", server, logic::EncodeCalloutKeys(keys)).dump());

  Apply(BackendYaml(ns, "team-a", ns, "nats", "hatchet.team-a"));
  json backend = Get("pubsubbackend", ns, "team-a");
  ASSERT_TRUE(backend.is_object());
  logic::CredentialState state;
  state.current = {
      .username = "team-a-hatchet", .password = *logic::GeneratePassword(), .bcrypt = ""};
  state.current.bcrypt = *logic::BcryptHash(state.current.password, 4);
  Apply(OwnedSecret(ns, "team-a-nats-credentials", backend, logic::EncodeState(state)).dump());

  AuthorizerProcess process({ns}, "", {"--kick-after", "0", "--sweep-interval", "1s"});
  testing::Process& authorizer = process.process();
  ASSERT_TRUE(authorizer.running()) << authorizer.Log();
  ASSERT_TRUE(testing::WaitFor([&] { return process.Ready(); }, kDeadline)) << authorizer.Log();

  {
    Engine engine(nats.url(), state.current.username, state.current.password);
    ASSERT_TRUE(engine.connected()) << engine.error() << "\n" << authorizer.Log() << nats.Log();
    EXPECT_TRUE(engine.RoundTrip("hatchet.team-a.x"));
    std::string text;
    auto [status, body] = process.Fetch("/metrics");
    ASSERT_EQ(status, 200);
    text = body;
    EXPECT_THAT(text, HasSubstr("switchboard_authorizer_decisions_total{reason=\"Allowed\","
                                "result=\"allowed\"} 1"));
    EXPECT_THAT(text, HasSubstr("switchboard_authorizer_subscribed{name=\"nats\",namespace=\"" +
                                ns + "\"} 1"));

    // A status write changes nothing a decision reads: it wakes no rebuild.
    // A new backend after it, on the same watch, does: exactly one more.
    auto rebuilds = [&] {
      auto [code, metrics] = process.Fetch("/metrics");
      const std::string name = "switchboard_authorizer_rebuild_duration_seconds_count ";
      const auto at = metrics.find(name);
      return code == 200 && at != std::string::npos ? std::stol(metrics.substr(at + name.size()))
                                                    : -1L;
    };
    const std::string rv = Get("pubsubbackend", ns, "team-a")["metadata"]["resourceVersion"];
    const long before = rebuilds();
    ASSERT_GE(before, 1) << "the first rebuild after the caches synced";
    auto patched = Kubectl({"patch", "pubsubbackend", "team-a", "-n", ns, "--subresource=status",
                            "--type=merge", "-p", R"({"status":{"observedGeneration":7}})"});
    ASSERT_EQ(patched.exit_code, 0) << patched.err;
    ASSERT_NE(Get("pubsubbackend", ns, "team-a")["metadata"]["resourceVersion"], rv)
        << "the patch must be a real write, or this checks nothing";
    Apply(BackendYaml(ns, "team-b", ns, "nats", "hatchet.team-b"));
    ASSERT_TRUE(testing::WaitFor([&] { return rebuilds() > before; }, kDeadline));
    EXPECT_EQ(rebuilds(), before + 1) << "the status write woke a rebuild of its own";

    // The installation goes: refused from then on, its connection closed.
    Kubectl({"delete", "secret", "-n", ns, "team-a-nats-credentials"});
    EXPECT_TRUE(engine.WaitClosed()) << authorizer.Log();
  }
  Engine again(nats.url(), state.current.username, state.current.password);
  EXPECT_FALSE(again.connected());
  EXPECT_THAT(authorizer.Log(), Not(HasSubstr(state.current.password)));
  EXPECT_THAT(authorizer.Log(), Not(HasSubstr(keys.issuer_seed)));

  ASSERT_TRUE(authorizer.Signal(SIGTERM));
  EXPECT_EQ(authorizer.Wait(kDeadline), 0) << authorizer.Log();
  DeleteNamespace(ns);
}

}  // namespace
}  // namespace switchboard::e2e
