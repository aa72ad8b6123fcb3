// switchboard-operator end to end: the real API server (fixture "cluster"),
// a real nats-server that includes the rendered file and is reloaded by
// switchboard-config-sync, the operator as a process. Each test has its own
// namespaces and processes.
#include <gtest/gtest.h>
#include <nats/nats.h>
#include <signal.h>

#include <memory>

#include "switchboard/api/constants.h"
#include "switchboard/operator_logic/render.h"
#include "switchboard/pubsub/probe.h"
#include "switchboard/testing/e2e_harness.h"
#include "switchboard/testing/wait.h"

namespace switchboard::e2e {
namespace {

using namespace std::chrono_literals;

pubsub::ProbeOptions ProbeFromEnv(const std::map<std::string, std::string>& env,
                                  const std::string& prefix_override = "") {
  pubsub::ProbeOptions o;
  o.urls = env.at("SERVER_MSGQUEUE_PUBSUB_NATS_URL");
  o.username = env.at("SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME");
  o.password = env.at("SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD");
  o.subject_prefix = prefix_override.empty() ? env.at("SERVER_MSGQUEUE_PUBSUB_NATS_SUBJECT_PREFIX")
                                             : prefix_override;
  o.timeout = 2s;
  return o;
}

// One NatsServer in `srv_ns`, backends in `a_ns` and `b_ns`.
class OperatorE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(Kubeconfig().empty()) << "run through ctest (fixture cluster)";
    srv_ns = UniqueName("op-srv");
    a_ns = UniqueName("op-a");
    b_ns = UniqueName("op-b");
    c_ns = UniqueName("op-c");  // watched, but not admitted by the server
    for (const auto& ns : {srv_ns, a_ns, b_ns, c_ns}) CreateNamespace(ns);
    nats = std::make_unique<LocalNats>();
    ASSERT_TRUE(nats->ok());
    sync = StartConfigSync(*nats, srv_ns, "shared-switchboard");
    StartOperator();
    Apply(NatsServerYaml(srv_ns, "shared", nats->url(), {a_ns, b_ns}));
  }

  void StartOperator(const std::vector<std::string>& extra = {}) {
    op = std::make_unique<OperatorProcess>(std::vector<std::string>{srv_ns, a_ns, b_ns, c_ns},
                                           extra);
  }

  void TearDown() override {
    if (HasFailure() && op) std::cerr << "operator log:\n" << op->Log() << "\n";
    for (const auto& ns : {a_ns, b_ns, c_ns, srv_ns}) {
      if (!ns.empty()) DeleteNamespace(ns);
    }
    op.reset();
    sync.Stop();
  }

  void CreateBackends() {
    Apply(BackendYaml(a_ns, "hatchet", srv_ns, "shared", "hatchet.a"));
    Apply(BackendYaml(b_ns, "hatchet", srv_ns, "shared", "hatchet.b"));
    ASSERT_TRUE(WaitReady(a_ns, "hatchet")) << Get("psb", a_ns, "hatchet").dump(2);
    ASSERT_TRUE(WaitReady(b_ns, "hatchet")) << Get("psb", b_ns, "hatchet").dump(2);
  }

  std::string srv_ns, a_ns, b_ns, c_ns;
  std::unique_ptr<LocalNats> nats;
  testing::Process sync;
  std::unique_ptr<OperatorProcess> op;
};

TEST_F(OperatorE2E, TwoInstallationsBecomeReadyAndAreIsolated) {
  CreateBackends();
  json a = Get("psb", a_ns, "hatchet");
  EXPECT_EQ(ReadyReason(a), "Probed");
  EXPECT_EQ(a["status"]["envSecretName"], "hatchet-pubsub-env");
  EXPECT_EQ(a["status"]["subject"], "hatchet.a.*");
  EXPECT_EQ(a["status"]["serverMaxPayload"], 16777216);
  EXPECT_EQ(a["status"]["username"], a_ns + "-hatchet");
  EXPECT_EQ(a["status"]["observedGeneration"], a["metadata"]["generation"]);
  EXPECT_EQ(a["status"]["envSecretHash"].get<std::string>().rfind("sha256:", 0), 0u);

  auto env_a = SecretData(a_ns, "hatchet-pubsub-env");
  auto env_b = SecretData(b_ns, "hatchet-pubsub-env");
  EXPECT_EQ(env_a["SERVER_MSGQUEUE_PUBSUB_KIND"], "nats");
  EXPECT_EQ(env_a["SERVER_MSGQUEUE_PUBSUB_NATS_URL"], nats->url());
  EXPECT_EQ(env_a["SERVER_MSGQUEUE_PUBSUB_NATS_SUBJECT_PREFIX"], "hatchet.a");
  EXPECT_GE(env_a["SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD"].size(), 43u);  // 32 bytes, base64
  EXPECT_EQ(env_a.size(), 5u);

  // The env Secret is owned by the backend, labelled ours.
  json s = Get("secret", a_ns, "hatchet-pubsub-env");
  EXPECT_EQ(s["metadata"]["ownerReferences"][0]["uid"], a["metadata"]["uid"]);
  EXPECT_EQ(s["metadata"]["labels"]["app.kubernetes.io/managed-by"], "switchboard");
  // Its writes are recorded under --field-manager (default switchboard-operator).
  auto managers =
      Kubectl({"get", "secret", "-n", a_ns, "hatchet-pubsub-env", "--show-managed-fields", "-o",
               "jsonpath={.metadata.managedFields[*].manager}"});
  EXPECT_EQ(managers.out, "switchboard-operator") << managers.err;

  // The rendered file: both users, bcrypt only, no plaintext password.
  std::string conf = nats->IncludeText();
  EXPECT_NE(conf.find(a_ns + "-hatchet"), std::string::npos) << conf;
  EXPECT_NE(conf.find(b_ns + "-hatchet"), std::string::npos) << conf;
  EXPECT_EQ(conf.find(env_a["SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD"]), std::string::npos);
  EXPECT_NE(conf.find("$2b$"), std::string::npos);
  json srv = Get("natssrv", srv_ns, "shared");
  EXPECT_EQ(srv["status"]["installations"], 2);

  // Each env Secret, as the engine gets it, works.
  EXPECT_TRUE(pubsub::Probe(ProbeFromEnv(env_a)).ok());
  EXPECT_TRUE(pubsub::Probe(ProbeFromEnv(env_b)).ok());
  // `switchboard pubsub probe` with the env Secret exported as environment.
  auto cli = testing::Run({BinDir() + "/switchboard", "pubsub", "probe"},
                          std::map<std::string, std::string>(env_a.begin(), env_a.end()));
  EXPECT_EQ(cli.exit_code, 0) << cli.out << cli.err;
  // A is denied B's subjects.
  auto cross = pubsub::Probe(ProbeFromEnv(env_a, "hatchet.b"));
  ASSERT_FALSE(cross.ok());
  EXPECT_EQ(cross.status().code(), StatusCode::kPermissionDenied) << cross.status().ToString();

  // No password in the operator's log or in events.
  EXPECT_EQ(op->Log().find(env_a["SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD"]), std::string::npos);
  auto events = Kubectl({"get", "events", "-n", a_ns, "-o", "json"});
  EXPECT_EQ(events.out.find(env_a["SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD"]), std::string::npos);
  EXPECT_NE(op->Metrics().find("switchboard_probe_total{result=\"Probed\"}"), std::string::npos);
}

// The reloader (config-sync with --monitor-url) reports what the server
// loaded; a new user is probed once that report carries it, so no probe is
// refused on the way to Ready.
TEST_F(OperatorE2E, NewUsersAreProbedOnceTheServerReportsThemLoaded) {
  const std::string annotation(api::kLoadedConfigHashAnnotation);
  auto reported_current = [&] {
    json s = Get("secret", srv_ns, "shared-switchboard");
    auto data = SecretData(srv_ns, "shared-switchboard");
    return s.is_object() && data.count("switchboard.conf") &&
           s["metadata"].value("annotations", json::object()).value(annotation, "") ==
               operator_logic::ConfigHash(data["switchboard.conf"]);
  };
  // The first (empty) render is loaded and reported before any user exists.
  ASSERT_TRUE(testing::WaitFor(reported_current, 30s))
      << Get("secret", srv_ns, "shared-switchboard").dump(2);
  CreateBackends();
  EXPECT_TRUE(testing::WaitFor(reported_current, 30s));
  const std::string metrics = op->Metrics();
  EXPECT_NE(metrics.find("switchboard_probe_total{result=\"Probed\"}"), std::string::npos);
  // No probe was refused for want of the user: none was sent before the
  // server had it. (A slow probe on a loaded machine may time out; that is
  // not what this test is about.)
  for (std::string_view refused : {"AuthFailed", "ConfigNotReloaded"}) {
    EXPECT_EQ(metrics.find("switchboard_probe_total{result=\"" + std::string(refused) + "\"}"),
              std::string::npos)
        << metrics;
  }
  EXPECT_NE(sync.Log().find("reload confirmed; reported on the Secret"), std::string::npos);
}

TEST_F(OperatorE2E, DeletingAnInstallationRemovesItsUserAndSecrets) {
  CreateBackends();
  auto env_a = SecretData(a_ns, "hatchet-pubsub-env");
  auto r = Kubectl({"delete", "psb", "hatchet", "-n", a_ns, "--timeout=30s"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Get("psb", a_ns, "hatchet").is_null());
  EXPECT_TRUE(Get("secret", a_ns, "hatchet-pubsub-env").is_null());
  EXPECT_TRUE(Get("secret", a_ns, "hatchet-nats-credentials").is_null());
  EXPECT_TRUE(testing::WaitFor(
      [&] { return nats->IncludeText().find(a_ns + "-hatchet") == std::string::npos; }, 10s));
  // The server reloaded: A's credentials are refused, B still works.
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        auto p = pubsub::Probe(ProbeFromEnv(env_a));
        return !p.ok() && p.status().code() == StatusCode::kUnauthenticated;
      },
      10s));
  EXPECT_TRUE(pubsub::Probe(ProbeFromEnv(SecretData(b_ns, "hatchet-pubsub-env"))).ok());
  EXPECT_TRUE(testing::WaitFor(
      [&] { return Get("natssrv", srv_ns, "shared")["status"]["installations"] == 1; }, 10s));
}

// nats.c connection held open across the rotation, like a running engine.
struct Conn {
  natsConnection* nc = nullptr;
  natsSubscription* sub = nullptr;
  ~Conn() {
    if (sub) natsSubscription_Destroy(sub);
    if (nc) natsConnection_Destroy(nc);
  }
  bool Open(const std::string& url, const std::string& user, const std::string& pass,
            const std::string& subject) {
    natsOptions* o = nullptr;
    natsOptions_Create(&o);
    natsOptions_SetURL(o, url.c_str());
    natsOptions_SetUserInfo(o, user.c_str(), pass.c_str());
    natsStatus s = natsConnection_Connect(&nc, o);
    natsOptions_Destroy(o);
    if (s != NATS_OK) return false;
    return natsConnection_SubscribeSync(&sub, nc, subject.c_str()) == NATS_OK &&
           natsConnection_Flush(nc) == NATS_OK;
  }
  bool RoundTrip(const std::string& subject) {
    if (natsConnection_PublishString(nc, subject.c_str(), "ping") != NATS_OK) return false;
    natsMsg* m = nullptr;
    if (natsSubscription_NextMsg(&m, sub, 2000) != NATS_OK) return false;
    natsMsg_Destroy(m);
    return true;
  }
};

TEST_F(OperatorE2E, RotationKeepsOpenConnectionsUntilTheOldPasswordRetires) {
  CreateBackends();
  auto before = SecretData(a_ns, "hatchet-pubsub-env");
  const std::string old_user = before["SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME"];
  Conn engine;
  ASSERT_TRUE(engine.Open(nats->url(), old_user, before["SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD"],
                          "hatchet.a.t_v1"));
  ASSERT_TRUE(engine.RoundTrip("hatchet.a.t_v1"));
  const std::string hash_before = Get("psb", a_ns, "hatchet")["status"]["envSecretHash"];

  // Hold the server's reload, like the minute a NATS reloader on Kubernetes
  // may take to see a Secret volume change.
  sync.Stop();
  auto r = Kubectl(
      {"annotate", "psb", "hatchet", "-n", a_ns, "pubsub.switchboard.dev/rotate-password=t1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto config_has_both = [&] {
    for (const auto& [key, text] : SecretData(srv_ns, "shared-switchboard")) {
      if (text.find("\"" + old_user + "\"") != std::string::npos &&
          text.find("\"" + old_user + "-r1\"") != std::string::npos) {
        return true;
      }
    }
    return false;
  };
  // Staged: the new user is in the config Secret, but the env Secret still
  // holds the old credentials, which the (not yet reloaded) server accepts:
  // an engine restarting now is not cut off.
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        json a = Get("psb", a_ns, "hatchet");
        return a["status"].contains("rotation") &&
               a["status"]["rotation"].value("phase", "") == "Staged" && config_has_both() &&
               ReadyStatus(a) == "True" && ReadyReason(a) == "RotationStaged";
      },
      20s))
      << Get("psb", a_ns, "hatchet").dump(2);
  {
    auto staged = SecretData(a_ns, "hatchet-pubsub-env");
    EXPECT_EQ(staged["SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME"], old_user);
    EXPECT_EQ(staged["SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD"],
              before["SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD"]);
    json a = Get("psb", a_ns, "hatchet");
    EXPECT_EQ(a["status"]["envSecretHash"], hash_before);
    EXPECT_EQ(a["status"].value("username", ""), old_user);
    EXPECT_FALSE(a["status"]["rotation"].contains("retiresAt"));
    EXPECT_EQ(nats->IncludeText().find(old_user + "-r1"), std::string::npos) << "not reloaded";
    EXPECT_TRUE(pubsub::Probe(ProbeFromEnv(staged)).ok()) << "a restarted engine connects";
    EXPECT_TRUE(engine.RoundTrip("hatchet.a.t_v1"));
  }

  // The reload happens; the probe with the new user passes: Retiring.
  sync = StartConfigSync(*nats, srv_ns, "shared-switchboard");
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        json a = Get("psb", a_ns, "hatchet");
        return a["status"].value("username", "") == old_user + "-r1" &&
               a["status"].contains("rotation") &&
               a["status"]["rotation"].value("phase", "") == "Retiring" && ReadyStatus(a) == "True";
      },
      20s))
      << Get("psb", a_ns, "hatchet").dump(2);
  json a = Get("psb", a_ns, "hatchet");
  EXPECT_NE(a["status"]["envSecretHash"], hash_before);
  auto after = SecretData(a_ns, "hatchet-pubsub-env");
  EXPECT_EQ(after["SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME"], old_user + "-r1");
  EXPECT_NE(after["SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD"],
            before["SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD"]);
  // Both users are in the config; the running engine was not cut off.
  std::string conf = nats->IncludeText();
  EXPECT_NE(conf.find("\"" + old_user + "\""), std::string::npos);
  EXPECT_NE(conf.find("\"" + old_user + "-r1\""), std::string::npos);
  EXPECT_TRUE(engine.RoundTrip("hatchet.a.t_v1"));
  EXPECT_EQ(natsConnection_Status(engine.nc), NATS_CONN_STATUS_CONNECTED);
  EXPECT_TRUE(pubsub::Probe(ProbeFromEnv(before)).ok()) << "old password still valid";
  EXPECT_TRUE(pubsub::Probe(ProbeFromEnv(after)).ok());

  // The engines moved: acknowledge; the old user is retired.
  r = Kubectl({"annotate", "psb", "hatchet", "-n", a_ns,
               "pubsub.switchboard.dev/rotation-acknowledged=t1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(testing::WaitFor(
      [&] { return !Get("psb", a_ns, "hatchet")["status"].contains("rotation"); }, 10s));
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        auto p = pubsub::Probe(ProbeFromEnv(before));
        return !p.ok() && p.status().code() == StatusCode::kUnauthenticated;
      },
      10s));
  EXPECT_TRUE(pubsub::Probe(ProbeFromEnv(after)).ok());
}

TEST_F(OperatorE2E, InvalidObjectsAreReportedInStatus) {
  CreateBackends();
  // Passes the CRD schema, fails the shared cross-object rules: B's prefix again.
  Apply(BackendYaml(b_ns, "dup", srv_ns, "shared", "hatchet.b"));
  EXPECT_TRUE(WaitReady(b_ns, "dup", "False", "InvalidSpec")) << Get("psb", b_ns, "dup").dump(2);
  json dup = Get("psb", b_ns, "dup");
  EXPECT_NE(ReadyStatus(dup), "True");
  auto events = Kubectl(
      {"get", "events", "-n", b_ns, "--field-selector", "involvedObject.name=dup", "-o", "json"});
  EXPECT_NE(events.out.find("InvalidSpec"), std::string::npos) << events.out;
  // B itself is untouched.
  EXPECT_EQ(ReadyStatus(Get("psb", b_ns, "hatchet")), "True");

  // A namespace the server does not admit.
  Apply(BackendYaml(c_ns, "x", srv_ns, "shared", "hatchet.c"));
  EXPECT_TRUE(WaitReady(c_ns, "x", "False", "NamespaceNotAllowed"))
      << Get("psb", c_ns, "x").dump(2);
  // A missing server.
  Apply(BackendYaml(c_ns, "y", srv_ns, "nope", "hatchet.y"));
  EXPECT_TRUE(WaitReady(c_ns, "y", "False", "ServerNotFound")) << Get("psb", c_ns, "y").dump(2);
  // A Secret someone else owns is never overwritten.
  auto r = Kubectl(
      {"create", "secret", "generic", "taken-pubsub-env", "-n", a_ns, "--from-literal=keep=me"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Apply(BackendYaml(a_ns, "taken", srv_ns, "shared", "hatchet.taken"));
  EXPECT_TRUE(WaitReady(a_ns, "taken", "False", "SecretConflict"))
      << Get("psb", a_ns, "taken").dump(2);
  EXPECT_EQ(SecretData(a_ns, "taken-pubsub-env"),
            (std::map<std::string, std::string>{{"keep", "me"}}));

  // A NatsServer whose usage system Secret (spec.usage.systemUser) another
  // object names for Switchboard to write: the rules refuse it and the
  // operator reports SecretConflict naming the field, writing nothing. The
  // holder's server does not exist, so it writes nothing either.
  Apply(BackendYaml(srv_ns, "holder", srv_ns, "nope", "hatchet.holder") +
        "  output: {secretName: usage-switchboard-system}\n");
  ASSERT_TRUE(WaitReady(srv_ns, "holder", "False", "ServerNotFound"))
      << Get("psb", srv_ns, "holder").dump(2);
  Apply(NatsServerYaml(srv_ns, "usage", "nats://127.0.0.1:1", {a_ns}) +
        "  usage: {systemUser: true}\n");
  json usage;
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        usage = Get("natsserver", srv_ns, "usage");
        return ReadyReason(usage) == "SecretConflict";
      },
      30s))
      << usage.dump(2);
  EXPECT_EQ(ReadyStatus(usage), "False");
  std::string message;
  for (const auto& c : usage["status"].value("conditions", json::array())) {
    if (c.value("type", "") == "Ready") message = c.value("message", "");
  }
  EXPECT_NE(message.find("spec.usage.systemUser"), std::string::npos) << message;
  EXPECT_NE(message.find("PubSubBackend " + srv_ns + "/holder"), std::string::npos) << message;
  EXPECT_TRUE(Get("secret", srv_ns, "usage-switchboard-system").is_null());
  // The claim goes: the server is provisioned with no change of its own,
  // its system Secret written.
  Kubectl({"delete", "psb", "-n", srv_ns, "holder", "--timeout=30s"});
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        usage = Get("natsserver", srv_ns, "usage");
        return ReadyReason(usage) == "ConfigRendered";
      },
      30s))
      << usage.dump(2);
  EXPECT_FALSE(SecretData(srv_ns, "usage-switchboard-system")["password"].empty());
}

// Limits per installation, through the operator: the server's defaults
// and a backend's own limit reach the include file as each account's
// limits and the backends' status.limits; once the server goes back to
// Permissions the backend with limits is refused in its status (its user
// stays), the other keeps working with no limits.
TEST_F(OperatorE2E, InstallationLimitsReachTheFileAndTheStatus) {
  Apply(NatsServerYaml(srv_ns, "shared", nats->url(), {a_ns, b_ns}) +
        "  isolation: Accounts\n  installationLimits: {maxConnections: 5, maxSubscriptions: "
        "200}\n");
  Apply(BackendYaml(a_ns, "hatchet", srv_ns, "shared", "hatchet.a") +
        "    limits: {maxConnections: 3}\n");
  Apply(BackendYaml(b_ns, "hatchet", srv_ns, "shared", "hatchet.b"));
  ASSERT_TRUE(WaitReady(a_ns, "hatchet")) << Get("psb", a_ns, "hatchet").dump(2);
  ASSERT_TRUE(WaitReady(b_ns, "hatchet")) << Get("psb", b_ns, "hatchet").dump(2);
  EXPECT_EQ(Get("psb", a_ns, "hatchet")["status"]["limits"],
            (json{{"maxConnections", 3}, {"maxSubscriptions", 200}}));
  EXPECT_EQ(Get("psb", b_ns, "hatchet")["status"]["limits"],
            (json{{"maxConnections", 5}, {"maxSubscriptions", 200}}));
  const std::string conf = nats->IncludeText();
  EXPECT_NE(conf.find("\"" + a_ns +
                      "/hatchet\": {\n    limits: {max_connections: 3, "
                      "max_subscriptions: 200}\n"),
            std::string::npos)
      << conf;
  EXPECT_NE(conf.find("\"" + b_ns +
                      "/hatchet\": {\n    limits: {max_connections: 5, "
                      "max_subscriptions: 200}\n"),
            std::string::npos)
      << conf;
  // The engine's credentials work under the limits.
  EXPECT_TRUE(pubsub::Probe(ProbeFromEnv(SecretData(a_ns, "hatchet-pubsub-env"))).ok());

  auto r = Kubectl({"patch", "natssrv", "shared", "-n", srv_ns, "--type", "merge", "-p",
                    R"({"spec":{"isolation":"Permissions","installationLimits":null}})"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(WaitReady(a_ns, "hatchet", "False", "InvalidSpec"))
      << Get("psb", a_ns, "hatchet").dump(2);
  json a = Get("psb", a_ns, "hatchet");
  std::string message;
  for (const auto& c : a["status"]["conditions"]) {
    if (c["type"] == "Ready") message = c["message"];
  }
  EXPECT_NE(message.find("spec.nats.limits: NatsServer " + srv_ns +
                         "/shared has isolation: Permissions; with isolation: Permissions every "
                         "installation's user is in one shared account"),
            std::string::npos)
      << message;
  EXPECT_FALSE(a["status"].contains("limits")) << a["status"].dump(2);
  EXPECT_TRUE(testing::WaitFor(
      [&] { return !Get("psb", b_ns, "hatchet")["status"].contains("limits"); }, 30s));
  EXPECT_EQ(ReadyStatus(Get("psb", b_ns, "hatchet")), "True");
  EXPECT_TRUE(testing::WaitFor(
      [&] { return nats->IncludeText().find("authorization {") != std::string::npos; }, 30s));
  EXPECT_EQ(nats->IncludeText().find("limits:"), std::string::npos);
  EXPECT_TRUE(pubsub::Probe(ProbeFromEnv(SecretData(b_ns, "hatchet-pubsub-env"))).ok());
}

TEST_F(OperatorE2E, RestartedOperatorConvergesWithoutChangingPasswords) {
  CreateBackends();
  auto creds_a = SecretData(a_ns, "hatchet-nats-credentials");
  auto env_b = SecretData(b_ns, "hatchet-pubsub-env");
  std::string hash = Get("natssrv", srv_ns, "shared")["status"]["configHash"];
  std::string conf = nats->IncludeText();
  std::string probed = Get("psb", a_ns, "hatchet")["status"]["lastProbeTime"];

  ASSERT_EQ(op->process().Stop(10s).value_or(-1), 0) << "graceful SIGTERM exit";
  StartOperator();
  // Converged: the new process probed again.
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        json a = Get("psb", a_ns, "hatchet");
        return ReadyStatus(a) == "True" && a["status"].value("lastProbeTime", "") != probed;
      },
      20s));
  EXPECT_EQ(SecretData(a_ns, "hatchet-nats-credentials"), creds_a);
  EXPECT_EQ(SecretData(b_ns, "hatchet-pubsub-env"), env_b);
  EXPECT_EQ(Get("natssrv", srv_ns, "shared")["status"]["configHash"], hash);
  EXPECT_EQ(nats->IncludeText(), conf);
}

TEST_F(OperatorE2E, SecondReplicaStaysStandbyUntilTheLeaderStops) {
  const std::vector<std::string> le = {
      "--leader-elect", "--lease-namespace", srv_ns, "--lease-duration", "2s", "--renew-deadline",
      "1500ms",         "--retry-period",    "200ms"};
  op.reset();
  StartOperator(le);
  auto holder = [&] {
    json l = Get("lease", srv_ns, "switchboard-operator");
    return l.is_object() ? l["spec"].value("holderIdentity", "") : std::string();
  };
  ASSERT_TRUE(testing::WaitFor([&] { return !holder().empty(); }, 10s));
  const std::string first = holder();
  auto standby =
      std::make_unique<OperatorProcess>(std::vector<std::string>{srv_ns, a_ns, b_ns, c_ns}, le);
  Apply(BackendYaml(a_ns, "hatchet", srv_ns, "shared", "hatchet.a"));
  ASSERT_TRUE(WaitReady(a_ns, "hatchet"));
  EXPECT_EQ(holder(), first);
  EXPECT_TRUE(standby->Healthy());
  EXPECT_NE(standby->Metrics().find("switchboard_leader 0"), std::string::npos);
  EXPECT_EQ(standby->Log().find("caches synced"), std::string::npos) << "standby did work";

  // The leader dies without releasing: the standby takes over after the lease.
  op->process().Signal(SIGKILL);
  ASSERT_TRUE(testing::WaitFor([&] { return !holder().empty() && holder() != first; }, 15s));
  Apply(BackendYaml(b_ns, "hatchet", srv_ns, "shared", "hatchet.b"));
  EXPECT_TRUE(WaitReady(b_ns, "hatchet")) << standby->Log();
  EXPECT_NE(standby->Metrics().find("switchboard_leader 1"), std::string::npos);
  // A graceful stop releases the lease at once.
  standby->process().Stop(10s);
  EXPECT_TRUE(testing::WaitFor([&] { return holder().empty(); }, 5s));
  op.reset();
  StartOperator();  // for TearDown's finalizers
}

}  // namespace
}  // namespace switchboard::e2e
