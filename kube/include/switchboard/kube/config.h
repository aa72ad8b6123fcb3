// How to reach and authenticate to a kube-apiserver: from a kubeconfig file
// (like kubectl) or from inside a pod (service account).
#pragma once

#include <chrono>
#include <string>

#include "switchboard/common/status.h"

namespace switchboard::kube {

// Plain data; copyable. PEM blocks are held in memory (file references in a
// kubeconfig are read when it is loaded). Never log a Config: it holds keys
// and tokens.
struct Config {
  std::string server;           // "https://127.0.0.1:6443" (http:// allowed for tests)
  std::string ca_pem;           // trusted CA bundle; empty: the system's default store
  std::string client_cert_pem;  // client certificate (mutual TLS); empty: none
  std::string client_key_pem;   // its private key
  std::string bearer_token;     // static token; empty: none
  std::string token_file;       // re-read whenever its mtime/size changes; wins over bearer_token
  bool insecure_skip_tls_verify = false;      // only ever true when the kubeconfig says so
  std::string default_namespace = "default";  // the context's namespace, or the pod's
  std::string user_agent = "switchboard";
  // Default deadline of a non-streaming call (each Client call can override it).
  std::chrono::milliseconds timeout{std::chrono::seconds(30)};
  // TCP/TLS connect deadline.
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(5)};
  // A kept-alive connection idle for longer is closed, not reused: the API
  // server closes its own after 90 s idle (a load balancer in front of it
  // often after 60), and a create sent on a connection the server has
  // closed fails (a POST is not retried: it is not idempotent).
  std::chrono::milliseconds idle_connection_timeout{std::chrono::seconds(45)};

  // Parses a kubeconfig file and resolves `context` (empty: current-context).
  // Relative file paths in it are relative to the file's directory.
  // Errors (kInvalidArgument / kNotFound) name the field and the fix.
  static Result<Config> FromKubeconfig(const std::string& path, const std::string& context = "");

  // Same, from kubeconfig text; `base_dir` resolves relative paths. Pure
  // except for reading the files the kubeconfig references.
  static Result<Config> FromKubeconfigText(const std::string& yaml, const std::string& base_dir,
                                           const std::string& context = "");

  // In-cluster: KUBERNETES_SERVICE_HOST/PORT, the service-account token
  // (re-read when it rotates), CA and namespace under `sa_dir`.
  static Result<Config> InCluster(
      const std::string& sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

  // The kubectl order: `explicit_path` if non-empty, else $KUBECONFIG (first
  // entry of a ':' list), else in-cluster when KUBERNETES_SERVICE_HOST is
  // set, else ~/.kube/config.
  static Result<Config> Load(const std::string& explicit_path = "");
};

}  // namespace switchboard::kube
