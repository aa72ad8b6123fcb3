// AuthCallout mode end to end: the real API server (fixture "cluster"), the
// operator as a process, and a real nats-server-callout (tools cache)
// started with the static config the operator wrote into the config
// Secret (auth_callout is not reloadable: the server needs it at start).
// The NatsServer gets its callout Secret and static config; while no
// authorizer runs AuthorizerAvailable=False NoAuthorizer and a backend is
// not Ready; once one answers, the backend becomes Ready (the probe went
// through the callout with the env Secret's credentials) and
// AuthorizerAvailable=True; deleting the backend finishes at once.
//
// The authorizer here is a stand-in built in the test from natsauth and
// operator_logic's CollectDirectory + DecideAuthorization over the API
// server's objects (read per request): the same decisions the
// switchboard-authorizer binary makes from its caches, without its
// process. It stands in because this test checks the operator's side;
// the binary's own end-to-end run is tests/authorizer's and the issue-20
// e2e suite's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nats/nats.h>
#include <unistd.h>

#include <condition_variable>
#include <ctime>
#include <fstream>
#include <memory>
#include <mutex>

#include "e2e_harness.h"
#include "nats_handles.h"
#include "nats_library.h"
#include "switchboard/api/constants.h"
#include "switchboard/kube/client.h"
#include "switchboard/kube/resource.h"
#include "switchboard/natsauth/jwt.h"
#include "switchboard/natsauth/nkey.h"
#include "switchboard/operator_logic/callout.h"
#include "switchboard/pubsub/nats_pubsub.h"
#include "switchboard/pubsub/probe.h"
#include "switchboard/testing/nats_server.h"
#include "switchboard/testing/wait.h"

namespace switchboard::e2e {
namespace {

namespace logic = ::switchboard::operator_logic;
using namespace std::chrono_literals;
using pubsub::internal::NatsConnectionPtr;
using pubsub::internal::NatsMsgPtr;
using pubsub::internal::NatsOptionsPtr;
using pubsub::internal::NatsSubscriptionPtr;

std::string Tool(const std::string& name) {
  const char* dir = std::getenv("SWITCHBOARD_TOOLS_DIR");
  std::string d = dir && *dir ? dir : std::string(SWITCHBOARD_TEST_SOURCE_DIR) + "/.cache/tools";
  return d + "/bin/" + name;
}

const json* Condition(const json& obj, const std::string& type) {
  if (!obj.is_object() || !obj.contains("status") || !obj["status"].is_object() ||
      !obj["status"].contains("conditions")) {
    return nullptr;
  }
  for (const auto& c : obj["status"]["conditions"]) {
    if (c.value("type", "") == type) return &c;
  }
  return nullptr;
}
std::string ConditionReason(const json& obj, const std::string& type) {
  const json* c = Condition(obj, type);
  return c ? c->value("status", "") + "/" + c->value("reason", "") : "";
}

// The stand-in authorizer (see the file comment): a queue subscriber on the
// callout subject as the authorizer user. Callbacks run on nats.c's
// threads; the destructor unsubscribes and waits for the last one.
class StandInAuthorizer {
 public:
  StandInAuthorizer(const std::string& url, const std::map<std::string, std::string>& keys,
                    std::string server_ns, std::string server_name)
      : server_ns_(std::move(server_ns)), server_name_(std::move(server_name)) {
    auto cfg = kube::Config::Load(Kubeconfig());
    if (!cfg.ok()) return;
    auto client = kube::Client::New(*cfg);
    if (!client.ok()) return;
    client_ = std::move(client).value();
    auto issuer =
        natsauth::KeyPair::FromSeed(keys.at(std::string(logic::callout_keys::kIssuerSeed)));
    if (!issuer.ok()) return;
    issuer_ = std::make_unique<natsauth::KeyPair>(std::move(issuer).value());
    natsOptions* raw = nullptr;
    if (natsOptions_Create(&raw) != NATS_OK) return;
    NatsOptionsPtr opts(raw);
    const std::string password = keys.at(std::string(logic::callout_keys::kAuthorizerPassword));
    natsConnection* nc = nullptr;
    if (natsOptions_SetURL(opts.get(), url.c_str()) != NATS_OK ||
        natsOptions_SetUserInfo(opts.get(), std::string(api::kAuthorizerUsername).c_str(),
                                password.c_str()) != NATS_OK ||
        natsConnection_Connect(&nc, opts.get()) != NATS_OK) {
      return;
    }
    nc_.reset(nc);
    natsSubscription* sub = nullptr;
    if (natsConnection_QueueSubscribe(&sub, nc_.get(),
                                      std::string(api::kAuthCalloutSubject).c_str(),
                                      std::string(api::kAuthorizerQueueGroup).c_str(),
                                      &StandInAuthorizer::OnRequest, this) != NATS_OK) {
      return;
    }
    sub_.reset(sub);
    ok_ = natsSubscription_SetOnCompleteCB(sub_.get(), &StandInAuthorizer::OnComplete, this) ==
              NATS_OK &&
          natsConnection_Flush(nc_.get()) == NATS_OK;
  }
  ~StandInAuthorizer() {
    if (sub_ && natsSubscription_Unsubscribe(sub_.get()) == NATS_OK) {
      std::unique_lock lock(mu_);
      if (!done_cv_.wait_for(lock, 10s, [&] { return done_; })) {
        ADD_FAILURE() << "the stand-in's last callback did not return";
      }
    }
    if (nc_) natsConnection_Close(nc_.get());
    sub_.reset();
    nc_.reset();
  }
  bool ok() const { return ok_; }
  int Allowed() const {
    std::lock_guard lock(mu_);
    return allowed_;
  }
  std::vector<std::string> Errors() const {
    std::lock_guard lock(mu_);
    return errors_;
  }

 private:
  static void OnRequest(natsConnection* nc, natsSubscription*, natsMsg* msg, void* closure) {
    NatsMsgPtr owned(msg);
    static_cast<StandInAuthorizer*>(closure)->Answer(nc, owned.get());
  }
  static void OnComplete(void* closure) {
    auto* self = static_cast<StandInAuthorizer*>(closure);
    std::lock_guard lock(self->mu_);
    self->done_ = true;
    self->done_cv_.notify_all();
  }

  // The directory from the API server, as the authorizer builds it from
  // its caches.
  Result<logic::Directory> ReadDirectory() {
    auto server = client_->Get(kube::resources::NatsServer(), server_ns_, server_name_);
    if (!server.ok()) return server.status();
    auto list = client_->ListAll(kube::resources::PubSubBackend(), "");
    if (!list.ok()) return list.status();
    std::vector<const json*> backends;
    for (const auto& b : (*list)["items"]) backends.push_back(&b);
    std::vector<std::unique_ptr<json>> held;
    auto lookup = [&](std::string_view ns, std::string_view name) -> const json* {
      auto s = client_->Get(kube::resources::Secret(), ns, name);
      if (!s.ok()) return nullptr;
      held.push_back(std::make_unique<json>(std::move(s).value()));
      return held.back().get();
    };
    return logic::CollectDirectory(*server, backends, lookup);
  }

  void Answer(natsConnection* nc, natsMsg* msg) {
    const char* reply = natsMsg_GetReply(msg);
    if (reply == nullptr || *reply == '\0') return;
    const auto now = static_cast<int64_t>(std::time(nullptr));
    std::string token(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg)));
    auto request = natsauth::DecodeAuthorizationRequest(token, now, issuer_->public_key());
    if (!request.ok()) return Fail(request.status().ToString());
    natsauth::AuthorizationResponseClaims response;
    response.claims = {
        .audience = request->server_id.id, .issued_at = now, .subject = request->user_nkey};
    auto directory = ReadDirectory();
    if (!directory.ok()) return Fail(directory.status().ToString());
    auto d = logic::DecideAuthorization(*directory, request->connect_opts.user,
                                        request->connect_opts.pass, logic::Clock::now());
    if (d.denial != logic::Denial::kNone) {
      response.error = d.message;
    } else {
      natsauth::UserClaims user;
      user.claims = {.audience = d.account,
                     .issued_at = now,
                     .name = d.connection_name,
                     .subject = request->user_nkey};
      user.pub.allow = user.sub.allow = d.allow;
      auto jwt = natsauth::EncodeUserClaims(user, *issuer_);
      if (!jwt.ok()) return Fail(jwt.status().ToString());
      response.jwt = std::move(jwt).value();
      std::lock_guard lock(mu_);
      allowed_++;
    }
    auto answer = natsauth::EncodeAuthorizationResponse(response, *issuer_);
    if (!answer.ok()) return Fail(answer.status().ToString());
    natsConnection_Publish(nc, reply, answer->data(), static_cast<int>(answer->size()));
  }
  void Fail(std::string what) {
    std::lock_guard lock(mu_);
    errors_.push_back(std::move(what));
  }

  const std::string server_ns_, server_name_;
  std::unique_ptr<kube::Client> client_;
  std::unique_ptr<natsauth::KeyPair> issuer_;
  NatsConnectionPtr nc_;
  NatsSubscriptionPtr sub_;
  bool ok_ = false;
  mutable std::mutex mu_;
  std::condition_variable done_cv_;
  bool done_ = false;                // guarded by mu_
  int allowed_ = 0;                  // guarded by mu_
  std::vector<std::string> errors_;  // guarded by mu_
};

std::string CalloutServerYaml(const std::string& ns, const std::string& url,
                              const std::string& allowed) {
  return "apiVersion: pubsub.switchboard.dev/v1alpha1\nkind: NatsServer\nmetadata: {name: shared, "
         "namespace: \"" +
         ns + "\"}\nspec:\n  url: \"" + url +
         "\"\n  provisioning: {mode: AuthCallout}\n  allowedNamespaces: {from: List, names: [\"" +
         allowed + "\"]}\n";
}

class CalloutE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { library_ = std::make_unique<pubsub::internal::NatsLibraryUse>(); }
  static void TearDownTestSuite() {
    library_.reset();
    EXPECT_TRUE(pubsub::ShutdownNats().ok());
  }
  static inline std::unique_ptr<pubsub::internal::NatsLibraryUse> library_;

  void SetUp() override {
    ASSERT_FALSE(Kubeconfig().empty()) << "run through ctest (fixture cluster)";
    tool = Tool("nats-server-callout");
    ASSERT_EQ(access(tool.c_str(), X_OK), 0)
        << tool << " is missing: build it with `bash scripts/build-tools.sh nats-server-callout`";
    srv_ns = UniqueName("co-srv");
    a_ns = UniqueName("co-a");
    for (const auto& ns : {srv_ns, a_ns}) CreateNamespace(ns);
    // A probe through the callout waits for the authorizer's answer too.
    op = std::make_unique<OperatorProcess>(std::vector<std::string>{srv_ns, a_ns},
                                           std::vector<std::string>{"--probe-timeout", "5s"});
  }
  void TearDown() override {
    if (HasFailure() && op) std::cerr << "operator log:\n" << op->Log() << "\n";
    if (HasFailure() && nats) std::cerr << "nats log:\n" << nats->Log() << "\n";
    authorizer.reset();
    for (const auto& ns : {a_ns, srv_ns}) {
      if (!ns.empty()) DeleteNamespace(ns);
    }
    op.reset();
    nats.reset();
  }

  std::string tool, srv_ns, a_ns;
  std::unique_ptr<OperatorProcess> op;
  std::unique_ptr<testing::NatsServer> nats;
  std::unique_ptr<StandInAuthorizer> authorizer;
};

TEST_F(CalloutE2E, KeysConfigAuthorizerAvailabilityAndAReadyBackend) {
  // Nothing listens at this URL yet: the static config comes first.
  Apply(CalloutServerYaml(srv_ns, "nats://127.0.0.1:1", a_ns));
  json server;
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        server = Get("natsserver", srv_ns, "shared");
        return ReadyStatus(server) == "True";
      },
      30s))
      << server.dump(2);
  EXPECT_EQ(ReadyReason(server), "CalloutConfigured");
  EXPECT_EQ(Condition(server, "ConfigFits"), nullptr) << server.dump(2);

  // The callout Secret: owned by the NatsServer, labelled, with the keys.
  json secret = Get("secret", srv_ns, "shared-auth-callout");
  ASSERT_TRUE(secret.is_object()) << "no callout Secret";
  EXPECT_EQ(secret["metadata"]["labels"]["app.kubernetes.io/managed-by"], "switchboard");
  EXPECT_EQ(secret["metadata"]["ownerReferences"][0]["kind"], "NatsServer");
  EXPECT_EQ(secret["metadata"]["ownerReferences"][0]["uid"], server["metadata"]["uid"]);
  auto keys = SecretData(srv_ns, "shared-auth-callout");
  const std::string issuer = keys[std::string(logic::callout_keys::kIssuer)];
  ASSERT_FALSE(issuer.empty());
  EXPECT_EQ(server["status"]["authCallout"]["issuer"], issuer);
  EXPECT_EQ(server["status"]["authCallout"]["account"], "HATCHET");
  EXPECT_EQ(server["status"].dump().find(keys[std::string(logic::callout_keys::kIssuerSeed)]),
            std::string::npos)
      << "the seed must never be in status";

  // The static config, as the NATS pods mount it.
  auto config = SecretData(srv_ns, "shared-switchboard");
  const std::string text = config["switchboard.conf"];
  ASSERT_NE(text.find("auth_callout"), std::string::npos) << text;
  ASSERT_NE(text.find(issuer), std::string::npos) << text;
  nats = std::make_unique<testing::NatsServer>(text, 0, tool);
  ASSERT_TRUE(nats->ok()) << nats->Log();
  Apply(CalloutServerYaml(srv_ns, nats->url(), a_ns));

  // No authorizer yet: said so, and a backend is not Ready.
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        server = Get("natsserver", srv_ns, "shared");
        return ConditionReason(server, "AuthorizerAvailable") == "False/NoAuthorizer";
      },
      45s))
      << server.dump(2);
  EXPECT_EQ(server["status"]["authCallout"]["servers"], 1);
  EXPECT_EQ(server["status"]["authCallout"]["authorizers"], 0);
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        return op->Metrics().find(
                   "switchboard_natsserver_authorizers{name=\"shared\",namespace=\"" + srv_ns +
                   "\"} 0") != std::string::npos;
      },
      10s))
      << op->Metrics();
  Apply(BackendYaml(a_ns, "hatchet", srv_ns, "shared", "hatchet.a"));
  EXPECT_FALSE(WaitReady(a_ns, "hatchet", "True", "", 8)) << Get("psb", a_ns, "hatchet").dump(2);

  // An authorizer answers: the backend is Ready (its probe went through the
  // callout with the env Secret's credentials), the server says so.
  authorizer = std::make_unique<StandInAuthorizer>(nats->url(), keys, srv_ns, "shared");
  ASSERT_TRUE(authorizer->ok()) << nats->Log();
  ASSERT_TRUE(WaitReady(a_ns, "hatchet", "True", "Probed", 60))
      << Get("psb", a_ns, "hatchet").dump(2);
  EXPECT_GE(authorizer->Allowed(), 1);
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        server = Get("natsserver", srv_ns, "shared");
        return ConditionReason(server, "AuthorizerAvailable") == "True/AuthorizersSubscribed";
      },
      45s))
      << server.dump(2);
  EXPECT_EQ(server["status"]["authCallout"]["authorizers"], 1);
  EXPECT_EQ(server["status"]["installations"], 1);

  // The env Secret's credentials work, and only on their own prefix.
  auto env = SecretData(a_ns, "hatchet-pubsub-env");
  pubsub::ProbeOptions o;
  o.urls = env.at("SERVER_MSGQUEUE_PUBSUB_NATS_URL");
  o.username = env.at("SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME");
  o.password = env.at("SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD");
  o.subject_prefix = "hatchet.a";
  o.timeout = 5s;
  auto probe = pubsub::Probe(o);
  EXPECT_TRUE(probe.ok()) << probe.status().ToString();
  o.subject_prefix = "hatchet.other";
  EXPECT_EQ(pubsub::Probe(o).status().code(), StatusCode::kPermissionDenied);

  // The events: a Warning while none answered, a Normal once one did.
  auto events = Kubectl({"get", "events", "-n", srv_ns, "-o", "json"});
  EXPECT_NE(events.out.find("NoAuthorizer"), std::string::npos) << events.out;
  EXPECT_NE(events.out.find("AuthorizersSubscribed"), std::string::npos) << events.out;

  // Deleting it needs no render: it is gone at once, Secrets included.
  Kubectl({"delete", "psb", "-n", a_ns, "hatchet", "--wait=false"});
  EXPECT_TRUE(testing::WaitFor([&] { return Get("psb", a_ns, "hatchet").is_null(); }, 20s))
      << Get("psb", a_ns, "hatchet").dump(2);
  EXPECT_TRUE(Get("secret", a_ns, "hatchet-nats-credentials").is_null());
  EXPECT_THAT(authorizer->Errors(), ::testing::IsEmpty());
}

// Switching back to IncludeFile renders the include file again and keeps
// the callout Secret (its issuer must survive a switch back: the servers'
// static config names it and cannot reload it).
TEST_F(CalloutE2E, SwitchingModesKeepsTheIssuer) {
  Apply(CalloutServerYaml(srv_ns, "nats://127.0.0.1:1", a_ns));
  ASSERT_TRUE(testing::WaitFor(
      [&] { return ReadyReason(Get("natsserver", srv_ns, "shared")) == "CalloutConfigured"; },
      30s));
  const std::string issuer =
      SecretData(srv_ns, "shared-auth-callout")[std::string(logic::callout_keys::kIssuer)];
  ASSERT_FALSE(issuer.empty());

  Apply(NatsServerYaml(srv_ns, "shared", "nats://127.0.0.1:1", {a_ns}));
  json server;
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        server = Get("natsserver", srv_ns, "shared");
        return ReadyReason(server) == "ConfigRendered";
      },
      30s))
      << server.dump(2);
  EXPECT_FALSE(server["status"].contains("authCallout")) << server.dump(2);
  EXPECT_EQ(Condition(server, "AuthorizerAvailable"), nullptr) << server.dump(2);
  EXPECT_EQ(SecretData(srv_ns, "shared-switchboard")["switchboard.conf"].find("auth_callout"),
            std::string::npos);
  EXPECT_EQ(SecretData(srv_ns, "shared-auth-callout")[std::string(logic::callout_keys::kIssuer)],
            issuer);

  Apply(CalloutServerYaml(srv_ns, "nats://127.0.0.1:1", a_ns));
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        server = Get("natsserver", srv_ns, "shared");
        return ReadyReason(server) == "CalloutConfigured";
      },
      30s))
      << server.dump(2);
  EXPECT_EQ(server["status"]["authCallout"]["issuer"], issuer);
  EXPECT_NE(SecretData(srv_ns, "shared-switchboard")["switchboard.conf"].find(issuer),
            std::string::npos);
}

}  // namespace
}  // namespace switchboard::e2e
