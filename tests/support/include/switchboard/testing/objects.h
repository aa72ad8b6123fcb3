// The API objects tests feed to the parts they test: PubSubBackend,
// NatsServer and Secret as the API server would hold them, built by name and
// then changed in the few places a test is about.
//
// Defaults are the CRDs' required fields only, so an unset field takes the
// CRD's default (an unset subjectPrefix means hatchet.pubsub, an unset
// allowedNamespaces means Same). The one choice beyond them: a backend refers
// to the NatsServer "nats/shared", which is ServerBuilder's default, so the
// two defaults name each other.
//
// Each builder converts to nlohmann::json (it has a to_json), so it can stand
// wherever a json is expected; Json() says so explicitly; Yaml() is the same
// object as text for `kubectl apply -f -` (JSON is YAML).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace switchboard::testing {

// What every kind's builder sets in metadata and status, and the escape
// hatch Set for any field without a named setter.
template <typename Self>
class ObjectBuilder {
 public:
  Self& Uid(const std::string& uid) { return Meta("uid", uid); }
  Self& ResourceVersion(const std::string& rv) { return Meta("resourceVersion", rv); }
  Self& Generation(int64_t generation) { return Meta("generation", generation); }
  // metadata.creationTimestamp, RFC 3339 ("2026-01-01T00:00:00Z").
  Self& Created(const std::string& timestamp) { return Meta("creationTimestamp", timestamp); }
  Self& Annotation(const std::string& key, const std::string& value) {
    json_["metadata"]["annotations"][key] = value;
    return self();
  }
  Self& Label(const std::string& key, const std::string& value) {
    json_["metadata"]["labels"][key] = value;
    return self();
  }
  // Appends an ownerReference (kind and name; uid and controller when given).
  Self& Owner(const std::string& kind, const std::string& name, const std::string& uid = "",
              bool controller = false) {
    nlohmann::json ref = {{"kind", kind}, {"name", name}};
    if (!uid.empty()) ref["uid"] = uid;
    if (controller) ref["controller"] = true;
    json_["metadata"]["ownerReferences"].push_back(std::move(ref));
    return self();
  }
  // Appends a status condition (observedGeneration when >= 0).
  Self& Condition(const std::string& type, const std::string& status, const std::string& reason,
                  int64_t observed_generation = -1) {
    nlohmann::json c = {{"type", type}, {"status", status}, {"reason", reason}};
    if (observed_generation >= 0) c["observedGeneration"] = observed_generation;
    json_["status"]["conditions"].push_back(std::move(c));
    return self();
  }
  // Any field by JSON pointer ("/spec/nats/limits/maxConnections").
  Self& Set(const std::string& pointer, nlohmann::json value) {
    json_[nlohmann::json::json_pointer(pointer)] = std::move(value);
    return self();
  }
  // Removes a field by JSON pointer; nothing when it is absent.
  Self& Erase(const std::string& pointer) {
    nlohmann::json::json_pointer p(pointer);
    if (json_.contains(p)) json_[p.parent_pointer()].erase(p.back());
    return self();
  }

  const nlohmann::json& Json() const { return json_; }
  std::string Yaml() const { return json_.dump(); }
  friend void to_json(nlohmann::json& j, const Self& b) { j = b.json_; }

 protected:
  ObjectBuilder(const char* api_version, const char* kind, const std::string& ns,
                const std::string& name)
      : json_({{"apiVersion", api_version}, {"kind", kind}, {"metadata", {{"name", name}}}}) {
    if (!ns.empty()) json_["metadata"]["namespace"] = ns;
  }
  Self& Meta(const char* key, nlohmann::json value) {
    json_["metadata"][key] = std::move(value);
    return self();
  }
  Self& self() { return static_cast<Self&>(*this); }

  nlohmann::json json_;
};

// A nats PubSubBackend ns/name referring to the NatsServer nats/shared.
// An empty `ns` leaves metadata.namespace out (kubectl -n gives it).
class BackendBuilder : public ObjectBuilder<BackendBuilder> {
 public:
  explicit BackendBuilder(const std::string& ns = "team-a", const std::string& name = "hatchet");
  // spec.nats.serverRef; an empty `ns` leaves its namespace out (the
  // backend's own, by the CRD).
  BackendBuilder& Server(const std::string& ns, const std::string& name);
  // No spec.nats.serverRef at all.
  BackendBuilder& NoServer();
  BackendBuilder& Prefix(const std::string& subject_prefix);
  BackendBuilder& Username(const std::string& username);
  // Replaces spec.nats whole (a test of the block itself).
  BackendBuilder& Nats(nlohmann::json nats);
  // Ready with its observedGeneration.
  BackendBuilder& Ready(const std::string& status, const std::string& reason,
                        int64_t observed_generation = 1) {
    return Condition("Ready", status, reason, observed_generation);
  }
};

// A NatsServer ns/name at nats://nats.<ns>.svc:4222.
class ServerBuilder : public ObjectBuilder<ServerBuilder> {
 public:
  explicit ServerBuilder(const std::string& ns = "nats", const std::string& name = "shared");
  ServerBuilder& Url(const std::string& url);
  // allowedNamespaces {from: All} / {from: Same} / {from: List, names}.
  ServerBuilder& AllowAll();
  ServerBuilder& AllowSame();
  ServerBuilder& AllowList(const std::vector<std::string>& names);
  // spec.maxPayload as given (a quantity string or an integer).
  ServerBuilder& MaxPayload(nlohmann::json max_payload);
  // provisioning.mode AuthCallout; its account when not empty.
  ServerBuilder& Callout(const std::string& account = "");
  // Replaces spec whole (a test of the spec itself).
  ServerBuilder& Spec(nlohmann::json spec);
};

// A v1 Secret ns/name; data values are given in clear and stored in base64.
class SecretBuilder : public ObjectBuilder<SecretBuilder> {
 public:
  SecretBuilder(const std::string& ns, const std::string& name);
  SecretBuilder& Data(const std::string& key, const std::string& value);
};

// The AdmissionReview the API server sends the webhook for `object`
// (request.kind from the object's kind, namespace and name from its
// metadata); `old` becomes request.oldObject unless null.
nlohmann::json AdmissionReviewOf(const nlohmann::json& object,
                                 const std::string& operation = "CREATE",
                                 const nlohmann::json& old = nullptr,
                                 const std::string& uid = "uid-1");

}  // namespace switchboard::testing
