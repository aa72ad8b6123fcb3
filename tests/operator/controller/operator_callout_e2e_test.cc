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
// The authorizer is the real switchboard-authorizer (authorizer/), run as
// a process against the same API server.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>

#include "switchboard/api/constants.h"
#include "switchboard/operator_logic/callout.h"
#include "switchboard/pubsub/nats_pubsub.h"
#include "switchboard/pubsub/probe.h"
#include "switchboard/testing/e2e_harness.h"
#include "switchboard/testing/nats_server.h"
#include "switchboard/testing/temp_dir.h"
#include "switchboard/testing/test_certs.h"
#include "switchboard/testing/wait.h"

namespace switchboard::e2e {
namespace {

namespace logic = ::switchboard::operator_logic;
using namespace std::chrono_literals;

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

std::string ServerYaml(const std::string& ns, const std::string& url, const std::string& allowed) {
  return CalloutServerYaml(ns, "shared", url, {allowed});
}

class CalloutE2E : public ::testing::Test {
 protected:
  static void TearDownTestSuite() { EXPECT_TRUE(pubsub::ShutdownNats().ok()); }

  void SetUp() override {
    ASSERT_FALSE(Kubeconfig().empty()) << "run through ctest (fixture cluster)";
    const std::string tool = CalloutNatsServerBinary();
    ASSERT_EQ(access(tool.c_str(), X_OK), 0)
        << tool << " is missing: build it with `bash scripts/build-tools.sh nats-server-callout`";
    srv_ns = UniqueName("co-srv");
    a_ns = UniqueName("co-a");
    for (const auto& ns : {srv_ns, a_ns}) CreateNamespace(ns);
    callout =
        std::make_unique<CalloutNats>(srv_ns, "shared", std::vector<std::string>{srv_ns, a_ns});
    // A probe through the callout waits for the authorizer's answer too.
    op = std::make_unique<OperatorProcess>(std::vector<std::string>{srv_ns, a_ns},
                                           std::vector<std::string>{"--probe-timeout", "5s"});
  }
  void TearDown() override {
    if (HasFailure() && op) std::cerr << "operator log:\n" << op->Log() << "\n";
    if (HasFailure() && callout) std::cerr << callout->Logs(100000);
    for (const auto& ns : {a_ns, srv_ns}) {
      if (!ns.empty()) DeleteNamespace(ns);
    }
    op.reset();
    callout.reset();
  }

  std::string srv_ns, a_ns;
  std::unique_ptr<OperatorProcess> op;
  std::unique_ptr<CalloutNats> callout;  // nats-server-callout and the authorizers
};

TEST_F(CalloutE2E, KeysConfigAuthorizerAvailabilityAndAReadyBackend) {
  // Nothing listens at this URL yet: the static config comes first.
  Apply(ServerYaml(srv_ns, "nats://127.0.0.1:1", a_ns));
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
  ASSERT_TRUE(callout->StartServer(text)) << callout->error();
  Apply(ServerYaml(srv_ns, callout->url(), a_ns));

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
  ASSERT_TRUE(callout->StartAuthorizers(1, 30s)) << callout->error();
  AuthorizerProcess* authorizer = &callout->authorizer(0);
  ASSERT_TRUE(WaitReady(a_ns, "hatchet", "True", "Probed", 60))
      << Get("psb", a_ns, "hatchet").dump(2);
  EXPECT_NE(authorizer->Get("/metrics").find("result=\"allowed\""), std::string::npos)
      << authorizer->Get("/metrics");
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
  o.subject_prefix = "hatchet.a";

  // The events: a Warning while none answered, a Normal once one did.
  auto events = Kubectl({"get", "events", "-n", srv_ns, "-o", "json"});
  EXPECT_NE(events.out.find("NoAuthorizer"), std::string::npos) << events.out;
  EXPECT_NE(events.out.find("AuthorizersSubscribed"), std::string::npos) << events.out;

  // Deleting it needs no render: it is gone at once, Secrets included.
  Kubectl({"delete", "psb", "-n", a_ns, "hatchet", "--wait=false"});
  EXPECT_TRUE(testing::WaitFor([&] { return Get("psb", a_ns, "hatchet").is_null(); }, 20s))
      << Get("psb", a_ns, "hatchet").dump(2);
  EXPECT_TRUE(Get("secret", a_ns, "hatchet-nats-credentials").is_null());
  // And refused from then on.
  EXPECT_TRUE(testing::WaitFor(
      [&] { return pubsub::Probe(o).status().code() == StatusCode::kUnauthenticated; }, 20s));
}

// Switching back to IncludeFile renders the include file again and keeps
// the callout Secret (its issuer must survive a switch back: the servers'
// static config names it and cannot reload it).
TEST_F(CalloutE2E, SwitchingModesKeepsTheIssuer) {
  Apply(ServerYaml(srv_ns, "nats://127.0.0.1:1", a_ns));
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

  Apply(ServerYaml(srv_ns, "nats://127.0.0.1:1", a_ns));
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

// The operator judges a server in AuthCallout mode against every object it
// caches, as the webhook does: a callout Secret name that another object
// also claims is reported, never written, even while that Secret does not
// exist yet (nobody's write would have been refused). Naming another
// Secret in the field the message names provisions the server.
TEST_F(CalloutE2E, ACalloutSecretNameAnotherObjectClaimsIsReported) {
  // A backend whose env Secret is the server's default callout Secret; its
  // server does not exist, so it writes nothing (ServerNotFound), and its
  // status proves that the operator's caches hold it.
  Apply(BackendYaml(srv_ns, "holder", srv_ns, "nope", "hatchet.holder") +
        "  output: {secretName: shared-auth-callout}\n");
  ASSERT_TRUE(WaitReady(srv_ns, "holder", "False", "ServerNotFound"))
      << Get("psb", srv_ns, "holder").dump(2);

  Apply(ServerYaml(srv_ns, "nats://127.0.0.1:1", a_ns));
  json server;
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        server = Get("natsserver", srv_ns, "shared");
        return Condition(server, "Ready") != nullptr;
      },
      30s))
      << server.dump(2);
  // A Secret name another object claims: SecretConflict, as for a Secret
  // that is not Switchboard's.
  EXPECT_EQ(ConditionReason(server, "Ready"), "False/SecretConflict") << server.dump(2);
  const json* ready = Condition(server, "Ready");
  ASSERT_NE(ready, nullptr);
  EXPECT_THAT(ready->value("message", ""),
              ::testing::HasSubstr("spec.provisioning.authCallout.secretName"));
  EXPECT_THAT(ready->value("message", ""), ::testing::HasSubstr("PubSubBackend"));
  EXPECT_TRUE(Get("secret", srv_ns, "shared-auth-callout").is_null())
      << Get("secret", srv_ns, "shared-auth-callout").dump(2);
  auto events = Kubectl({"get", "events", "-n", srv_ns, "--field-selector",
                         "involvedObject.name=shared", "-o", "json"});
  EXPECT_NE(events.out.find("SecretConflict"), std::string::npos) << events.out;

  // The fix the message names: another name for the callout Secret.
  Apply(NatsServerYaml(srv_ns, "shared", "nats://127.0.0.1:1", {a_ns}) +
        "  provisioning:\n    mode: AuthCallout\n    authCallout: {secretName: shared-keys}\n");
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        server = Get("natsserver", srv_ns, "shared");
        return ReadyReason(server) == "CalloutConfigured";
      },
      30s))
      << server.dump(2);
  EXPECT_FALSE(
      SecretData(srv_ns, "shared-keys")[std::string(logic::callout_keys::kIssuer)].empty());
  EXPECT_TRUE(Get("secret", srv_ns, "shared-auth-callout").is_null());
}

// A refusal lasts only as long as its cause: when the backend that held
// the callout Secret's name goes, the refused server is provisioned with
// no change of its own (the wake table's refused-servers rows).
TEST_F(CalloutE2E, ARefusedServerIsProvisionedWhenTheClaimGoes) {
  Apply(BackendYaml(srv_ns, "holder", srv_ns, "nope", "hatchet.holder") +
        "  output: {secretName: shared-auth-callout}\n");
  ASSERT_TRUE(WaitReady(srv_ns, "holder", "False", "ServerNotFound"))
      << Get("psb", srv_ns, "holder").dump(2);
  Apply(ServerYaml(srv_ns, "nats://127.0.0.1:1", a_ns));
  json server;
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        server = Get("natsserver", srv_ns, "shared");
        return ConditionReason(server, "Ready") == "False/SecretConflict";
      },
      30s))
      << server.dump(2);

  Kubectl({"delete", "psb", "-n", srv_ns, "holder", "--timeout=30s"});
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        server = Get("natsserver", srv_ns, "shared");
        return ReadyReason(server) == "CalloutConfigured";
      },
      30s))
      << server.dump(2);
  EXPECT_EQ(server["metadata"]["generation"], 1) << "provisioned with no change of its own";
  EXPECT_FALSE(
      SecretData(srv_ns, "shared-auth-callout")[std::string(logic::callout_keys::kIssuer)].empty());
}

std::string CaSecretYaml(const std::string& ns, const std::string& pem) {
  json s = {{"apiVersion", "v1"},
            {"kind", "Secret"},
            {"metadata", {{"name", "nats-ca"}, {"namespace", ns}}},
            {"stringData", {{"ca.crt", pem}}}};
  return s.dump();  // JSON is YAML
}

// TLS in AuthCallout mode: the CA of spec.tls.caSecretRef reaches the
// authorizer through the callout Secret (the authorizer reads no other
// Secret). Missing: the NatsServer says so and how to fix it. Another CA:
// the authorizer does not connect and its readiness says why. The CA
// rotated in the user's Secret: the operator copies it on a later
// reconcile, the authorizer reconnects with it, and a backend becomes Ready
// through it over TLS.
TEST_F(CalloutE2E, TheCaOfCaSecretRefReachesTheAuthorizer) {
  testing::TempDir dir_a, dir_b;
  const auto certs = testing::MakeCerts(dir_a.path());
  const auto other = testing::MakeCerts(dir_b.path());
  ASSERT_FALSE(certs.ca_pem.empty());
  ASSERT_FALSE(other.ca_pem.empty());
  auto server_yaml = [&](const std::string& url) {
    return ServerYaml(srv_ns, url, a_ns) + "  tls: {caSecretRef: {name: nats-ca}}\n";
  };
  auto callout_ca = [&] {
    return SecretData(srv_ns, "shared-auth-callout")[std::string(logic::callout_keys::kCa)];
  };

  Apply(server_yaml("tls://127.0.0.1:1"));
  json server;
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        server = Get("natsserver", srv_ns, "shared");
        return ConditionReason(server, "Ready") == "False/CaSecretUnusable";
      },
      30s))
      << server.dump(2);
  const std::string message = Condition(server, "Ready")->value("message", "");
  EXPECT_THAT(message, ::testing::HasSubstr("spec.tls.caSecretRef"));
  EXPECT_THAT(message, ::testing::HasSubstr("create it with the PEM CA bundle"));
  // The keys and the static config are written all the same.
  EXPECT_FALSE(
      SecretData(srv_ns, "shared-auth-callout")[std::string(logic::callout_keys::kIssuer)].empty());
  EXPECT_EQ(callout_ca(), "");

  // A CA, but not the one that signed the server's certificate.
  Apply(CaSecretYaml(srv_ns, other.ca_pem));
  ASSERT_TRUE(testing::WaitFor([&] { return callout_ca() == other.ca_pem; }, 30s));
  ASSERT_TRUE(testing::WaitFor(
      [&] { return ReadyReason(Get("natsserver", srv_ns, "shared")) == "CalloutConfigured"; },
      30s));

  const std::string text = SecretData(srv_ns, "shared-switchboard")["switchboard.conf"];
  ASSERT_NE(text.find("auth_callout"), std::string::npos) << text;
  auto nats = std::make_unique<testing::NatsServer>(
      text + "tls {\n  cert_file: \"" + certs.cert + "\"\n  key_file: \"" + certs.key + "\"\n}\n",
      0, CalloutNatsServerBinary());
  ASSERT_TRUE(nats->ok()) << nats->Log();
  const std::string url = "tls://127.0.0.1:" + std::to_string(nats->port());
  Apply(server_yaml(url));
  auto authorizer = std::make_unique<AuthorizerProcess>(std::vector<std::string>{srv_ns, a_ns},
                                                        srv_ns + "/shared");
  std::pair<int, std::string> ready;
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        ready = authorizer->Fetch("/readyz");
        return ready.first == 503 && ready.second.find("TLS refused") != std::string::npos;
      },
      30s))
      << ready.first << " " << ready.second << "\n"
      << authorizer->Log();
  EXPECT_THAT(ready.second, ::testing::HasSubstr("spec.tls.caSecretRef"));

  // The CA rotated in the user's Secret.
  Apply(CaSecretYaml(srv_ns, certs.ca_pem));
  ASSERT_TRUE(testing::WaitFor([&] { return callout_ca() == certs.ca_pem; }, 45s));
  ASSERT_TRUE(testing::WaitFor([&] { return !authorizer->Get("/readyz").empty(); }, 30s))
      << authorizer->Fetch("/readyz").second << "\n"
      << authorizer->Log();
  Apply(BackendYaml(a_ns, "hatchet", srv_ns, "shared", "hatchet.a"));
  ASSERT_TRUE(WaitReady(a_ns, "hatchet", "True", "Probed", 60))
      << Get("psb", a_ns, "hatchet").dump(2);
  auto env = SecretData(a_ns, "hatchet-pubsub-env");
  EXPECT_EQ(env.at("SERVER_MSGQUEUE_PUBSUB_NATS_URL"), url);
  pubsub::ProbeOptions o;
  o.urls = url;
  o.username = env.at("SERVER_MSGQUEUE_PUBSUB_NATS_USERNAME");
  o.password = env.at("SERVER_MSGQUEUE_PUBSUB_NATS_PASSWORD");
  o.subject_prefix = "hatchet.a";
  o.ca_file = certs.ca_cert;
  o.timeout = 5s;
  auto probe = pubsub::Probe(o);
  EXPECT_TRUE(probe.ok()) << probe.status().ToString();
  // A CA is public, yet no log carries it.
  const std::string pem_line = certs.ca_pem.substr(certs.ca_pem.find('\n') + 1, 40);
  EXPECT_EQ(authorizer->Log().find(pem_line), std::string::npos);
  EXPECT_EQ(op->Log().find(pem_line), std::string::npos);
}

}  // namespace
}  // namespace switchboard::e2e
