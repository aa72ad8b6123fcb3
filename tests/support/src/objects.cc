#include "switchboard/testing/objects.h"

#include <string>

#include "switchboard/api/constants.h"
#include "switchboard/common/base64.h"

namespace switchboard::testing {

namespace {
const std::string kApiVersion(api::kApiVersion);
const std::string kBackend(api::kKindBackend);
const std::string kServer(api::kKindServer);
}  // namespace

BackendBuilder::BackendBuilder(const std::string& ns, const std::string& name)
    : ObjectBuilder(kApiVersion.c_str(), kBackend.c_str(), ns, name) {
  json_["spec"] = {{"kind", std::string(api::kBackendNats)},
                   {"nats", {{"serverRef", {{"name", "shared"}, {"namespace", "nats"}}}}}};
}

BackendBuilder& BackendBuilder::Server(const std::string& ns, const std::string& name) {
  nlohmann::json ref = {{"name", name}};
  if (!ns.empty()) ref["namespace"] = ns;
  json_["spec"]["nats"]["serverRef"] = std::move(ref);
  return *this;
}

BackendBuilder& BackendBuilder::NoServer() { return Erase("/spec/nats/serverRef"); }

BackendBuilder& BackendBuilder::Prefix(const std::string& subject_prefix) {
  json_["spec"]["nats"]["subjectPrefix"] = subject_prefix;
  return *this;
}

BackendBuilder& BackendBuilder::Username(const std::string& username) {
  json_["spec"]["nats"]["credentials"]["username"] = username;
  return *this;
}

BackendBuilder& BackendBuilder::Nats(nlohmann::json nats) {
  json_["spec"]["nats"] = std::move(nats);
  return *this;
}

ServerBuilder::ServerBuilder(const std::string& ns, const std::string& name)
    : ObjectBuilder(kApiVersion.c_str(), kServer.c_str(), ns, name) {
  json_["spec"] = {{"url", "nats://nats." + (ns.empty() ? std::string("nats") : ns) + ".svc:4222"}};
}

ServerBuilder& ServerBuilder::Url(const std::string& url) {
  json_["spec"]["url"] = url;
  return *this;
}

ServerBuilder& ServerBuilder::AllowAll() {
  json_["spec"]["allowedNamespaces"] = {{"from", "All"}};
  return *this;
}

ServerBuilder& ServerBuilder::AllowSame() {
  json_["spec"]["allowedNamespaces"] = {{"from", "Same"}};
  return *this;
}

ServerBuilder& ServerBuilder::AllowList(const std::vector<std::string>& names) {
  json_["spec"]["allowedNamespaces"] = {{"from", "List"}, {"names", names}};
  return *this;
}

ServerBuilder& ServerBuilder::MaxPayload(nlohmann::json max_payload) {
  json_["spec"]["maxPayload"] = std::move(max_payload);
  return *this;
}

ServerBuilder& ServerBuilder::Callout(const std::string& account) {
  json_["spec"]["provisioning"]["mode"] = "AuthCallout";
  if (!account.empty()) json_["spec"]["provisioning"]["authCallout"]["account"] = account;
  return *this;
}

ServerBuilder& ServerBuilder::Spec(nlohmann::json spec) {
  json_["spec"] = std::move(spec);
  return *this;
}

SecretBuilder::SecretBuilder(const std::string& ns, const std::string& name)
    : ObjectBuilder("v1", "Secret", ns, name) {}

SecretBuilder& SecretBuilder::Data(const std::string& key, const std::string& value) {
  json_["data"][key] = base64::Encode(value);
  return *this;
}

nlohmann::json AdmissionReviewOf(const nlohmann::json& object, const std::string& operation,
                                 const nlohmann::json& old, const std::string& uid) {
  const nlohmann::json& meta = object.contains("metadata") && object["metadata"].is_object()
                                   ? object["metadata"]
                                   : nlohmann::json::object();
  nlohmann::json request = {{"uid", uid},
                            {"kind",
                             {{"group", std::string(api::kGroup)},
                              {"version", std::string(api::kVersion)},
                              {"kind", object.value("kind", "")}}},
                            {"operation", operation},
                            {"namespace", meta.value("namespace", "")},
                            {"name", meta.value("name", "")},
                            {"object", object}};
  if (!old.is_null()) request["oldObject"] = old;
  return {{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"request", request}};
}

}  // namespace switchboard::testing
