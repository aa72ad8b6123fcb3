// Kubeconfig parsing (a table of files) and in-cluster configuration.
#include "switchboard/kube/config.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "switchboard/testing/temp_dir.h"

namespace switchboard::kube {
namespace {

using testing::TempDir;

// base64 of "CA-PEM", "CERT-PEM", "KEY-PEM".
constexpr char kCaB64[] = "Q0EtUEVN";
constexpr char kCertB64[] = "Q0VSVC1QRU0=";
constexpr char kKeyB64[] = "S0VZLVBFTQ==";

std::string Kubeconfig(const std::string& cluster_extra, const std::string& user_extra,
                       const std::string& context_extra = "", const std::string& current = "dev") {
  return "apiVersion: v1\nkind: Config\ncurrent-context: " + current +
         "\n"
         "clusters:\n"
         "- name: c1\n"
         "  cluster:\n"
         "    server: https://127.0.0.1:6443/\n" +
         cluster_extra +
         "contexts:\n"
         "- name: dev\n"
         "  context:\n"
         "    cluster: c1\n"
         "    user: u1\n" +
         context_extra +
         "- name: other\n"
         "  context:\n"
         "    cluster: c1\n"
         "    user: u1\n"
         "    namespace: other-ns\n"
         "users:\n"
         "- name: u1\n"
         "  user:\n" +
         user_extra;
}

TEST(Kubeconfig, EmbeddedDataTokenAndNamespace) {
  auto c = Config::FromKubeconfigText(
      Kubeconfig(std::string("    certificate-authority-data: ") + kCaB64 + "\n",
                 std::string("    client-certificate-data: ") + kCertB64 +
                     "\n    client-key-data: " + kKeyB64 + "\n    token: tok\n",
                 "    namespace: team-a\n"),
      "");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server, "https://127.0.0.1:6443");  // trailing slash removed
  EXPECT_EQ(c->ca_pem, "CA-PEM");
  EXPECT_EQ(c->client_cert_pem, "CERT-PEM");
  EXPECT_EQ(c->client_key_pem, "KEY-PEM");
  EXPECT_EQ(c->bearer_token, "tok");
  EXPECT_EQ(c->default_namespace, "team-a");
  EXPECT_FALSE(c->insecure_skip_tls_verify);
}

TEST(Kubeconfig, FilesRelativeToTheKubeconfig) {
  TempDir dir;
  dir.WriteFile("ca.crt", "CA-FROM-FILE");
  dir.WriteFile("admin.crt", "CERT-FROM-FILE");
  dir.WriteFile("admin.key", "KEY-FROM-FILE");
  std::string path = dir.WriteFile(
      "kubeconfig", Kubeconfig("    certificate-authority: ca.crt\n",
                               "    client-certificate: admin.crt\n    client-key: " + dir.path() +
                                   "/admin.key\n    tokenFile: token\n"));
  auto c = Config::FromKubeconfig(path);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->ca_pem, "CA-FROM-FILE");
  EXPECT_EQ(c->client_cert_pem, "CERT-FROM-FILE");
  EXPECT_EQ(c->client_key_pem, "KEY-FROM-FILE");
  EXPECT_EQ(c->token_file, dir.path() + "/token");
}

TEST(Kubeconfig, InsecureOnlyWhenSaid) {
  auto yes = Config::FromKubeconfigText(
      Kubeconfig("    insecure-skip-tls-verify: true\n", "    token: t\n"), "");
  ASSERT_TRUE(yes.ok());
  EXPECT_TRUE(yes->insecure_skip_tls_verify);
  auto no = Config::FromKubeconfigText(Kubeconfig("", "    token: t\n"), "");
  ASSERT_TRUE(no.ok());
  EXPECT_FALSE(no->insecure_skip_tls_verify);
}

TEST(Kubeconfig, ContextOverride) {
  auto c = Config::FromKubeconfigText(Kubeconfig("", "    token: t\n"), "", "other");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->default_namespace, "other-ns");
}

TEST(Kubeconfig, ErrorsNameTheFieldTable) {
  struct Case {
    std::string yaml;
    StatusCode code;
    std::string want;
  };
  const Case cases[] = {
      {Kubeconfig("", "    token: t\n", "", "missing"), StatusCode::kNotFound,
       "context \"missing\" not found"},
      {Kubeconfig("", "    token: t\n", "", "\"\""), StatusCode::kInvalidArgument,
       "current-context is empty"},
      {Kubeconfig("    certificate-authority-data: '***'\n", "    token: t\n"),
       StatusCode::kInvalidArgument, "certificate-authority-data: not valid base64"},
      {Kubeconfig("", std::string("    client-certificate-data: ") + kCertB64 + "\n"),
       StatusCode::kInvalidArgument, "only one of client-certificate and client-key"},
      {Kubeconfig("", "    exec:\n      command: aws\n"), StatusCode::kInvalidArgument,
       "exec (credential plugins) is not supported"},
      {Kubeconfig("    certificate-authority: /nonexistent/ca.crt\n", "    token: t\n"),
       StatusCode::kNotFound, "certificate-authority: cannot read /nonexistent/ca.crt"},
      {"apiVersion: v1\nkind: Config\ncurrent-context: x\ncontexts:\n- name: x\n  context:\n"
       "    cluster: nope\n",
       StatusCode::kNotFound, "cluster \"nope\" not found"},
      {"apiVersion: v1\ncurrent-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\n"
       "clusters:\n- name: c\n  cluster: {server: ftp://x}\n",
       StatusCode::kInvalidArgument, "must start with https://"},
      {"apiVersion: v1\ncurrent-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\n"
       "clusters:\n- name: c\n  cluster: {}\n",
       StatusCode::kInvalidArgument, "server is empty"},
      {"- just\n- a list\n", StatusCode::kInvalidArgument, "not a YAML mapping"},
      {"key: [unclosed", StatusCode::kInvalidArgument, "kubeconfig:"},
      {"apiVersion: v1\ncurrent-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: "
       "ghost}\nclusters:\n- name: c\n  cluster: {server: 'https://h'}\nusers: []\n",
       StatusCode::kNotFound, "user \"ghost\" not found"},
  };
  for (const auto& c : cases) {
    auto r = Config::FromKubeconfigText(c.yaml, "");
    ASSERT_FALSE(r.ok()) << c.want;
    EXPECT_EQ(r.status().code(), c.code) << r.status().ToString();
    EXPECT_NE(r.status().message().find(c.want), std::string::npos) << r.status().message();
  }
}

TEST(Kubeconfig, MissingFileNamesThePath) {
  auto r = Config::FromKubeconfig("/nonexistent/kubeconfig");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("/nonexistent/kubeconfig"), std::string::npos);
}

// Sets environment variables for one test and restores them afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = getenv(name);
    if (old != nullptr) old_ = old;
    had_ = old != nullptr;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_.c_str(), old_.c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

TEST(InCluster, ReadsServiceAccountFiles) {
  TempDir sa;
  sa.WriteFile("token", "sa-token\n");
  sa.WriteFile("ca.crt", "CLUSTER-CA");
  sa.WriteFile("namespace", "switchboard-system\n");
  ScopedEnv host("KUBERNETES_SERVICE_HOST", "10.0.0.1");
  ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
  auto c = Config::InCluster(sa.path());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server, "https://10.0.0.1:443");
  EXPECT_EQ(c->ca_pem, "CLUSTER-CA");
  EXPECT_EQ(c->token_file, sa.path() + "/token");  // re-read by the transport
  EXPECT_EQ(c->default_namespace, "switchboard-system");
}

TEST(InCluster, Ipv6AndMissingEnv) {
  TempDir sa;
  sa.WriteFile("token", "t");
  sa.WriteFile("ca.crt", "CA");
  {
    ScopedEnv host("KUBERNETES_SERVICE_HOST", "fd00::1");
    ScopedEnv port("KUBERNETES_SERVICE_PORT", "6443");
    auto c = Config::InCluster(sa.path());
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->server, "https://[fd00::1]:6443");
    EXPECT_EQ(c->default_namespace, "default");  // no namespace file
  }
  ScopedEnv host("KUBERNETES_SERVICE_HOST", nullptr);
  auto c = Config::InCluster(sa.path());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(c.status().message().find("KUBERNETES_SERVICE_HOST"), std::string::npos);
}

TEST(Load, ExplicitPathThenKubeconfigEnv) {
  TempDir dir;
  std::string a = dir.WriteFile("a", Kubeconfig("", "    token: from-a\n"));
  std::string b = dir.WriteFile("b", Kubeconfig("", "    token: from-b\n"));
  ScopedEnv kc("KUBECONFIG", (b + ":" + a).c_str());
  auto explicit_cfg = Config::Load(a);
  ASSERT_TRUE(explicit_cfg.ok());
  EXPECT_EQ(explicit_cfg->bearer_token, "from-a");
  auto env_cfg = Config::Load();
  ASSERT_TRUE(env_cfg.ok());
  EXPECT_EQ(env_cfg->bearer_token, "from-b");
}

}  // namespace
}  // namespace switchboard::kube
