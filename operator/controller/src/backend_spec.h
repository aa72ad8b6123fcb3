// A PubSubBackend's spec with the API defaults applied, read into plain
// fields (what the reconciler needs). Pure.
#pragma once

#include <string>
#include <vector>

#include "k8s_util.h"

namespace switchboard::controller {

struct BackendSpec {
  std::string ns, name, uid;
  std::string kind;  // nats | rabbitmq | postgres
  // nats
  std::string server_ns, server_name;
  std::string prefix = "hatchet.pubsub";
  std::string username;         // base user name (default <namespace>-<name>)
  std::string password_secret;  // referenced Secret; empty: generated
  std::string password_key = "password";
  std::string grace = "10m";
  // rabbitmq
  std::string url_secret, url_key = "url";
  int64_t max_pub = 10, max_sub = 20;
  // postgres
  int64_t max_conns = 5, min_conns = 1;
  std::string env_secret;  // default <name>-pubsub-env

  std::string server_key() const { return server_ns + "/" + server_name; }
  std::string key() const { return ns + "/" + name; }
  std::string credentials_secret() const { return name + "-nats-credentials"; }
};

struct ServerSpec {
  std::string ns, name, uid;
  std::string url;
  int64_t max_payload = 16L * 1024 * 1024;
  int64_t max_pending = 0;
  std::string config_secret;  // default <name>-switchboard
  std::string config_key = "switchboard.conf";
  std::string ca_secret, ca_key = "ca.crt";
  std::string isolation;              // spec.isolation ("" = Permissions)
  std::string allowed_from = "Same";  // Same | All | List
  std::vector<std::string> allowed_names;
  std::string key() const { return ns + "/" + name; }
  bool Allows(const std::string& backend_ns) const;
};
ServerSpec ReadServerSpec(const json& server);

// Reads the spec, applying docs/api.md defaults to absent fields.
BackendSpec ReadBackendSpec(const json& backend);

// The NatsServer a backend refers to ("" when it is not a nats backend).
std::string ServerKeyOf(const json& backend);

}  // namespace switchboard::controller
