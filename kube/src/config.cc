// Kubeconfig and in-cluster configuration.
#include "switchboard/kube/config.h"

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "file_util.h"
#include "switchboard/api/documents.h"
#include "switchboard/common/base64.h"

namespace switchboard::kube {

namespace {

using internal::ReadWholeFile;
using nlohmann::json;

std::string Resolve(const std::string& base_dir, const std::string& p) {
  if (p.empty() || p[0] == '/' || base_dir.empty()) return p;
  return (std::filesystem::path(base_dir) / p).string();
}

// n[key], or nullptr when n is not a mapping or has no such key.
const json* Member(const json* n, const char* key) {
  if (n == nullptr || !n->is_object()) return nullptr;
  auto it = n->find(key);
  return it == n->end() ? nullptr : &*it;
}

// Finds the entry named `name` in a kubeconfig list (contexts, clusters, users).
const json* FindNamed(const json* list, const std::string& name) {
  if (list == nullptr || !list->is_array()) return nullptr;
  for (const auto& item : *list) {
    const json* n = Member(&item, "name");
    if (n != nullptr && n->is_string() && n->get_ref<const std::string&>() == name) return &item;
  }
  return nullptr;
}

// A scalar as the text it was written as: the YAML loader resolves plain
// scalars (a token of digits reads as a number), kubeconfig fields are text.
std::string Str(const json* n, const char* key) {
  const json* v = Member(n, key);
  if (v == nullptr || v->is_null() || v->is_object() || v->is_array()) return "";
  if (v->is_string()) return v->get<std::string>();
  return v->dump();
}

// Reads `<field>-data` (base64) or `<field>` (a file path) into *out.
Status DataOrFile(const json* n, const std::string& field, const std::string& where,
                  const std::string& base_dir, std::string* out) {
  std::string data = Str(n, (field + "-data").c_str());
  if (!data.empty()) {
    auto decoded = base64::Decode(std::string_view(data));
    if (!decoded) {
      return Status::InvalidArgument(where + "." + field +
                                     "-data: not valid base64; encode the PEM with `base64 -w0`");
    }
    *out = std::move(*decoded);
    return Status::Ok();
  }
  std::string file = Str(n, field.c_str());
  if (!file.empty()) {
    auto content = ReadWholeFile(Resolve(base_dir, file), where + "." + field);
    if (!content.ok()) return content.status();
    *out = std::move(content.value());
  }
  return Status::Ok();
}

Result<Config> ParseKubeconfig(const json& root, const std::string& base_dir,
                               const std::string& context_override) {
  if (!root.is_object()) {
    return Status::InvalidArgument("kubeconfig: not a YAML mapping (expected kind: Config)");
  }
  std::string ctx_name =
      context_override.empty() ? Str(&root, "current-context") : context_override;
  if (ctx_name.empty()) {
    return Status::InvalidArgument(
        "kubeconfig: current-context is empty; set it with `kubectl config use-context NAME`");
  }
  const json* ctx_entry = FindNamed(Member(&root, "contexts"), ctx_name);
  if (ctx_entry == nullptr) {
    return Status::NotFound("kubeconfig: context \"" + ctx_name + "\" not found in contexts");
  }
  const json* ctx = Member(ctx_entry, "context");
  std::string cluster_name = Str(ctx, "cluster");
  std::string user_name = Str(ctx, "user");
  const json* cluster_entry = FindNamed(Member(&root, "clusters"), cluster_name);
  if (cluster_entry == nullptr) {
    return Status::NotFound("kubeconfig: contexts[" + ctx_name + "].context.cluster \"" +
                            cluster_name + "\" not found in clusters");
  }
  const json* cluster = Member(cluster_entry, "cluster");
  Config c;
  c.server = Str(cluster, "server");
  if (c.server.empty()) {
    return Status::InvalidArgument("kubeconfig: clusters[" + cluster_name +
                                   "].cluster.server is empty; set the API server URL");
  }
  if (c.server.rfind("https://", 0) != 0 && c.server.rfind("http://", 0) != 0) {
    return Status::InvalidArgument("kubeconfig: clusters[" + cluster_name + "].cluster.server \"" +
                                   c.server + "\" must start with https:// or http://");
  }
  while (!c.server.empty() && c.server.back() == '/') c.server.pop_back();
  if (const json* skip = Member(cluster, "insecure-skip-tls-verify");
      skip != nullptr && !skip->is_null()) {
    std::string text = skip->is_string() ? skip->get<std::string>() : skip->dump();
    if (text != "true" && text != "false") {
      return Status::InvalidArgument("kubeconfig: clusters[" + cluster_name +
                                     "].cluster.insecure-skip-tls-verify must be true or false");
    }
    c.insecure_skip_tls_verify = text == "true";
  }
  SB_RETURN_IF_ERROR(DataOrFile(cluster, "certificate-authority",
                                "clusters[" + cluster_name + "].cluster", base_dir, &c.ca_pem));
  std::string ns = Str(ctx, "namespace");
  if (!ns.empty()) c.default_namespace = ns;

  if (!user_name.empty()) {
    const json* user_entry = FindNamed(Member(&root, "users"), user_name);
    if (user_entry == nullptr) {
      return Status::NotFound("kubeconfig: contexts[" + ctx_name + "].context.user \"" + user_name +
                              "\" not found in users");
    }
    const json* user = Member(user_entry, "user");
    std::string where = "users[" + user_name + "].user";
    SB_RETURN_IF_ERROR(DataOrFile(user, "client-certificate", where, base_dir, &c.client_cert_pem));
    SB_RETURN_IF_ERROR(DataOrFile(user, "client-key", where, base_dir, &c.client_key_pem));
    if (c.client_cert_pem.empty() != c.client_key_pem.empty()) {
      return Status::InvalidArgument("kubeconfig: " + where +
                                     " sets only one of client-certificate and client-key; set "
                                     "both or neither");
    }
    c.bearer_token = Str(user, "token");
    std::string token_file = Str(user, "tokenFile");
    if (!token_file.empty()) c.token_file = Resolve(base_dir, token_file);
    if (Member(user, "exec") != nullptr) {
      return Status::InvalidArgument("kubeconfig: " + where +
                                     ".exec (credential plugins) is not supported; use a token, "
                                     "tokenFile or client certificate");
    }
    if (Member(user, "auth-provider") != nullptr) {
      return Status::InvalidArgument("kubeconfig: " + where +
                                     ".auth-provider is not supported; use a token, tokenFile or "
                                     "client certificate");
    }
  }
  return c;
}

}  // namespace

Result<Config> Config::FromKubeconfigText(const std::string& yaml, const std::string& base_dir,
                                          const std::string& context) {
  // The manifest loader (libyaml): the first document, as kubectl reads it.
  api::LoadOptions options;
  options.expand_lists = false;
  api::LoadResult loaded = api::LoadDocuments(yaml, options);
  if (loaded.documents.empty() && !loaded.status.ok()) {
    return Status::InvalidArgument("kubeconfig: line " + std::to_string(loaded.error_line) + ": " +
                                   loaded.status.message());
  }
  if (loaded.documents.empty()) return ParseKubeconfig(json(), base_dir, context);
  return ParseKubeconfig(loaded.documents.front().value, base_dir, context);
}

Result<Config> Config::FromKubeconfig(const std::string& path, const std::string& context) {
  auto text = ReadWholeFile(path, "kubeconfig");
  if (!text.ok()) return text.status();
  auto c =
      FromKubeconfigText(text.value(), std::filesystem::path(path).parent_path().string(), context);
  if (!c.ok()) return c.status().Annotate(path);
  return c;
}

Result<Config> Config::InCluster(const std::string& sa_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || *host == '\0' || port == nullptr || *port == '\0') {
    return Status::FailedPrecondition(
        "in-cluster config: KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT are not set (not "
        "running in a pod?); pass --kubeconfig or set KUBECONFIG");
  }
  Config c;
  std::string h = host;
  if (h.find(':') != std::string::npos) h = "[" + h + "]";  // IPv6 literal
  c.server = "https://" + h + ":" + port;
  c.token_file = sa_dir + "/token";
  auto token = ReadWholeFile(c.token_file, "in-cluster service-account token");
  if (!token.ok()) return token.status();
  auto ca = ReadWholeFile(sa_dir + "/ca.crt", "in-cluster CA");
  if (!ca.ok()) return ca.status();
  c.ca_pem = std::move(ca.value());
  auto ns = ReadWholeFile(sa_dir + "/namespace", "in-cluster namespace");
  if (ns.ok() && !ns->empty()) {
    std::string n = ns.value();
    while (!n.empty() && (n.back() == '\n' || n.back() == ' ')) n.pop_back();
    c.default_namespace = n;
  }
  return c;
}

Result<Config> Config::Load(const std::string& explicit_path) {
  if (!explicit_path.empty()) return FromKubeconfig(explicit_path);
  const char* env = std::getenv("KUBECONFIG");
  if (env != nullptr && *env != '\0') {
    std::string first(env);
    first = first.substr(0, first.find(':'));
    return FromKubeconfig(first);
  }
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  if (host != nullptr && *host != '\0') return InCluster();
  const char* home = std::getenv("HOME");
  if (home != nullptr) {
    std::string p = std::string(home) + "/.kube/config";
    if (std::filesystem::exists(p)) return FromKubeconfig(p);
  }
  return Status::NotFound(
      "no Kubernetes configuration: pass --kubeconfig, set KUBECONFIG, or run in a pod");
}

}  // namespace switchboard::kube
