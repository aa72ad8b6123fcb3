// switchboard-webhook against the real kube-apiserver (cluster fixture):
// registered through Validating- and MutatingWebhookConfiguration with a URL
// client config (https://127.0.0.1:<port>) and a caBundle, scoped by a
// namespaceSelector to this test's namespaces, and deleted at the end so
// other e2e tests sharing the cluster are not affected.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "switchboard/api/documents.h"
#include "switchboard/rules/validate.h"
#include "switchboard/testing/net.h"
#include "switchboard/testing/objects.h"
#include "switchboard/testing/process.h"
#include "switchboard/testing/temp_dir.h"
#include "switchboard/testing/test_certs.h"
#include "switchboard/testing/wait.h"

namespace switchboard {
namespace {

using nlohmann::json;
using testing::Run;
using testing::RunResult;
namespace fs = std::filesystem;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string Base64(const std::string& in) {
  RunResult r = Run({"base64", "-w0"}, {}, in);
  return r.out;
}

// Everything the suite shares: one webhook process, two namespaces, the
// two webhook configurations.
struct Env_ {
  std::string kubeconfig, source, binary;
  std::string token, ns_a, ns_b, config_name;
  std::unique_ptr<testing::TempDir> dir;
  testing::TestCerts certs;
  int port = 0;
  std::unique_ptr<testing::Process> webhook;
};
Env_* env = nullptr;

RunResult Kubectl(std::vector<std::string> args, const std::string& stdin_data = "") {
  std::vector<std::string> argv = {"kubectl", "--kubeconfig", env->kubeconfig};
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv, {}, stdin_data, std::chrono::seconds(60));
}

// The rule set's verdict on a manifest file, computed in-process: what the
// webhook must say.
rules::Report RulesOn(const std::string& path, const std::string& ns, json* object = nullptr) {
  auto text = api::ReadFileText(path);
  EXPECT_TRUE(text.ok()) << path;
  auto loaded = api::LoadDocuments(*text);
  EXPECT_TRUE(loaded.status.ok() && loaded.documents.size() == 1) << path;
  json o = loaded.documents.at(0).value;
  o["metadata"]["namespace"] = ns;
  if (object != nullptr) *object = o;
  return rules::Validate(o, {});
}

std::string WebhookConfigs() {
  json ca_bundle = Base64(env->certs.ca_pem);
  json rules = json::array({{{"apiGroups", {"pubsub.switchboard.dev"}},
                             {"apiVersions", {"v1alpha1"}},
                             {"operations", {"CREATE", "UPDATE"}},
                             {"resources", {"pubsubbackends", "natsservers"}},
                             {"scope", "Namespaced"}}});
  json selector = {{"matchLabels", {{"switchboard.dev/webhook-e2e", env->token}}}};
  auto hook = [&](const std::string& name, const std::string& path) {
    return json{{"name", name},
                {"clientConfig",
                 {{"url", "https://127.0.0.1:" + std::to_string(env->port) + path},
                  {"caBundle", ca_bundle}}},
                {"rules", rules},
                {"namespaceSelector", selector},
                {"sideEffects", "None"},
                {"admissionReviewVersions", {"v1"}},
                {"failurePolicy", "Fail"},
                {"timeoutSeconds", 5}};
  };
  json list = {{"apiVersion", "v1"},
               {"kind", "List"},
               {"items",
                {{{"apiVersion", "admissionregistration.k8s.io/v1"},
                  {"kind", "MutatingWebhookConfiguration"},
                  {"metadata", {{"name", env->config_name}}},
                  {"webhooks", {hook("mutate.pubsub.switchboard.dev", "/mutate")}}},
                 {{"apiVersion", "admissionregistration.k8s.io/v1"},
                  {"kind", "ValidatingWebhookConfiguration"},
                  {"metadata", {{"name", env->config_name}}},
                  {"webhooks", {hook("validate.pubsub.switchboard.dev", "/validate")}}}}}};
  return list.dump();
}

class WebhookE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    env = new Env_;
    env->kubeconfig = Env("SWITCHBOARD_KUBECONFIG");
    env->source = Env("SWITCHBOARD_SOURCE_DIR");
    env->binary = Env("SWITCHBOARD_BINARY_DIR");
    if (env->kubeconfig.empty()) return;
    std::random_device rd;
    env->token = std::to_string(rd() % 1000000);
    env->ns_a = "webhook-e2e-" + env->token + "-a";
    env->ns_b = "webhook-e2e-" + env->token + "-b";
    env->config_name = "switchboard-e2e-" + env->token;
    env->dir = std::make_unique<testing::TempDir>();
    env->certs = testing::MakeCerts(env->dir->path());
    env->port = testing::FreePort();

    testing::Process::Options o;
    o.argv = {env->binary + "/bin/switchboard-webhook",
              "--tls-cert-file",
              env->certs.cert,
              "--tls-key-file",
              env->certs.key,
              "--port",
              std::to_string(env->port),
              "--bind-address",
              "127.0.0.1",
              "--metrics-port",
              "0",
              "--kubeconfig",
              env->kubeconfig};
    o.log_path = env->dir->path() + "/webhook.log";
    env->webhook = std::make_unique<testing::Process>(o);

    for (const auto& ns : {env->ns_a, env->ns_b}) {
      Kubectl({"create", "namespace", ns});
      Kubectl({"label", "namespace", ns, "switchboard.dev/webhook-e2e=" + env->token});
    }
  }

  static void TearDownTestSuite() {
    if (env == nullptr) return;
    if (!env->kubeconfig.empty()) {
      Kubectl({"delete", "validatingwebhookconfiguration,mutatingwebhookconfiguration",
               env->config_name, "--ignore-not-found"});
      for (const auto& ns : {env->ns_a, env->ns_b}) {
        Kubectl({"-n", ns, "delete", "pubsubbackends,natsservers", "--all", "--wait=false"});
        Kubectl({"delete", "namespace", ns, "--wait=false"});
      }
    }
    if (env->webhook) env->webhook->Stop();
    delete env;
    env = nullptr;
  }

  void SetUp() override {
    if (env->kubeconfig.empty()) GTEST_SKIP() << "needs the cluster fixture (ctest -L e2e)";
    static bool registered = false;
    if (registered) return;
    ASSERT_FALSE(env->certs.cert.empty());
    // Ready means the watch-backed cache has listed both kinds.
    httplib::SSLClient c("127.0.0.1", env->port);
    c.set_ca_cert_path(env->certs.ca_cert.c_str());
    c.enable_server_certificate_verification(true);
    ASSERT_TRUE(testing::WaitFor(
        [&] {
          auto r = c.Get("/readyz");
          return r && r->status == 200;
        },
        std::chrono::seconds(20)))
        << env->webhook->Log();
    RunResult r = Kubectl({"apply", "-f", "-"}, WebhookConfigs());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // The API server picks configurations up asynchronously: wait until a
    // server-side dry run is answered by the webhook.
    std::string probe =
        testing::BackendBuilder("", "probe").Server("", "x").Prefix("probe..x").Yaml();
    RunResult p;
    ASSERT_TRUE(testing::WaitFor(
        [&] {
          p = Kubectl({"-n", env->ns_a, "apply", "--dry-run=server", "-f", "-"}, probe);
          return p.exit_code != 0 && p.err.find("denied the request") != std::string::npos;
        },
        std::chrono::seconds(30), std::chrono::milliseconds(200)))
        << p.exit_code << " " << p.out << p.err;
    registered = true;
  }

  // `switchboard validate` on the same file, when this build has it.
  static std::optional<RunResult> SwitchboardValidate(const std::string& path) {
    RunResult r = testing::Run({env->binary + "/bin/switchboard", "validate", path});
    if (r.err.find("this build has no") != std::string::npos) return std::nullopt;
    return r;
  }
};

TEST_F(WebhookE2E, InvalidSamplesFailWithTheWebhooksMessage) {
  std::string dir = env->source + "/tests/e2e/testdata/invalid";
  int judged_by_webhook = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string path = entry.path().string();
    SCOPED_TRACE(path);
    rules::Report report = RulesOn(path, env->ns_a);
    RunResult apply = Kubectl({"-n", env->ns_a, "apply", "-f", path});
    EXPECT_NE(apply.exit_code, 0) << apply.out;
    RunResult dry = Kubectl({"-n", env->ns_a, "apply", "--dry-run=server", "-f", path});
    EXPECT_NE(dry.exit_code, 0) << dry.out;
    if (apply.err.find("strict decoding error") != std::string::npos) {
      // An unknown field is refused while decoding, before admission runs.
      EXPECT_FALSE(report.ok()) << "the rule set should reject unknown fields too";
    } else if (!report.ok()) {
      ++judged_by_webhook;
      // The API server applies the CRD's own defaults before admission, so
      // the webhook may see fewer problems than the raw file has; each one
      // it names must be one the rule set names for the file.
      EXPECT_NE(apply.err.find("denied the request"), std::string::npos) << apply.err;
      bool named = false;
      for (const auto& e : report.errors)
        named |= apply.err.find(e.ToString()) != std::string::npos;
      EXPECT_TRUE(named) << apply.err << "\nwant one of the rule set's errors, first: "
                         << report.errors[0].ToString();
      // The server-side dry run answers the same.
      EXPECT_EQ(dry.err.substr(std::min(dry.err.size(), dry.err.find("denied"))),
                apply.err.substr(std::min(apply.err.size(), apply.err.find("denied"))));
    } else {
      // Not the rule set's to reject: the CRD schema (which the API server
      // checks after mutating admission) still refuses it.
      std::cout << "not judged by the rules: " << path << ": " << apply.err;
    }
    if (auto v = SwitchboardValidate(path)) {
      EXPECT_EQ(v->exit_code, report.ok() ? 0 : 1) << v->out << v->err;
      // Every rule message the webhook gave, the CLI gives too.
      for (const auto& e : report.errors) {
        if (apply.err.find(e.ToString()) == std::string::npos) continue;
        EXPECT_NE((v->out + v->err).find(e.ToString()), std::string::npos) << v->out << v->err;
      }
    }
  }
  EXPECT_GT(judged_by_webhook, 20);
}

TEST_F(WebhookE2E, ValidSamplesPassAndReceiveTheirDefaults) {
  // A server and a backend bound to it in the same namespace.
  std::string samples = env->source + "/crds/samples/";
  for (std::string name : {"natsserver-minimal.yaml", "pubsubbackend-nats-minimal.yaml",
                           "pubsubbackend-postgres.yaml"}) {
    std::string path = samples + name;
    SCOPED_TRACE(path);
    json object;
    rules::Report report = RulesOn(path, env->ns_a, &object);
    ASSERT_TRUE(report.ok()) << report.errors[0].ToString();
    RunResult dry = Kubectl({"-n", env->ns_a, "apply", "--dry-run=server", "-f", path});
    EXPECT_EQ(dry.exit_code, 0) << dry.err;
    RunResult apply = Kubectl({"-n", env->ns_a, "apply", "-f", path});
    ASSERT_EQ(apply.exit_code, 0) << apply.err;
    RunResult get = Kubectl({"-n", env->ns_a, "get", "-f", path, "-o", "json"});
    ASSERT_EQ(get.exit_code, 0) << get.err;
    json stored = json::parse(get.out);
    EXPECT_EQ(stored["spec"], rules::DefaultedCopy(object)["spec"]);
    if (auto v = SwitchboardValidate(path)) {
      EXPECT_EQ(v->exit_code, 0) << v->out << v->err;
    }
  }
  // A default only the webhook can give: the username is <namespace>-<name>.
  RunResult user = Kubectl({"-n", env->ns_a, "get", "pubsubbackend", "hatchet-minimal", "-o",
                            "jsonpath={.spec.nats.credentials.username}"});
  EXPECT_EQ(user.out, env->ns_a + "-hatchet-minimal");
}

// In the namespace kubectl -n gives, on the NatsServer shared-e2e there.
json BackendOn(const std::string& name, const std::string& prefix) {
  return testing::BackendBuilder("", name).Server("", "shared-e2e").Prefix(prefix);
}
// The NatsServer shared-e2e in the namespace kubectl -n gives.
json SharedServer() {
  return testing::ServerBuilder("", "shared-e2e").Url("nats://nats.example:4222");
}

TEST_F(WebhookE2E, SecondBackendWithAnExistingPrefixIsRefused) {
  ASSERT_EQ(Kubectl({"-n", env->ns_b, "apply", "-f", "-"}, SharedServer().dump()).exit_code, 0);
  RunResult first =
      Kubectl({"-n", env->ns_b, "apply", "-f", "-"}, BackendOn("first", "hatchet.shared").dump());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  // The cache learns about "first" through its watch; poll (the webhook
  // never lists per request).
  RunResult second;
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        second = Kubectl({"-n", env->ns_b, "apply", "--dry-run=server", "-f", "-"},
                         BackendOn("second", "hatchet.shared").dump());
        return second.exit_code != 0;
      },
      std::chrono::seconds(10), std::chrono::milliseconds(100)));
  EXPECT_NE(second.err.find("denied the request"), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("spec.nats.subjectPrefix"), std::string::npos) << second.err;
  RunResult real =
      Kubectl({"-n", env->ns_b, "apply", "-f", "-"}, BackendOn("second", "hatchet.shared").dump());
  EXPECT_NE(real.exit_code, 0);
  EXPECT_EQ(real.err.substr(real.err.find("denied")), second.err.substr(second.err.find("denied")));
}

TEST_F(WebhookE2E, WarningsAppearInKubectlOutput) {
  ASSERT_EQ(Kubectl({"-n", env->ns_b, "apply", "-f", "-"}, SharedServer().dump()).exit_code, 0);
  ASSERT_EQ(
      Kubectl({"-n", env->ns_b, "apply", "-f", "-"}, BackendOn("warned", "hatchet.warn").dump())
          .exit_code,
      0);
  // Changing the prefix of an existing installation is allowed, with a
  // warning that its engines must restart.
  RunResult update =
      Kubectl({"-n", env->ns_b, "apply", "-f", "-"}, BackendOn("warned", "hatchet.warn2").dump());
  ASSERT_EQ(update.exit_code, 0) << update.err;
  EXPECT_NE(update.err.find("Warning:"), std::string::npos) << update.err;
  EXPECT_NE(update.err.find("subjectPrefix"), std::string::npos) << update.err;
}

// Last (tests run in declaration order): SIGTERM ends the process cleanly.
TEST_F(WebhookE2E, StopsGracefullyOnSigterm) {
  ASSERT_TRUE(env->webhook->Signal(SIGTERM));
  std::optional<int> code = env->webhook->Wait(std::chrono::seconds(15));
  ASSERT_TRUE(code.has_value()) << "still running 15 s after SIGTERM";
  EXPECT_EQ(*code, 0) << env->webhook->Log();
  EXPECT_NE(env->webhook->Log().find("\"msg\":\"stopped\""), std::string::npos);
}

}  // namespace
}  // namespace switchboard
