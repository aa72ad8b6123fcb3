#include "switchboard/operator_logic/cluster_render.h"

#include "selection.h"
#include "switchboard/api/claims.h"
#include "switchboard/api/constants.h"
#include "switchboard/api/metadata.h"
#include "switchboard/api/names.h"
#include "switchboard/api/views.h"
#include "switchboard/operator_logic/objects.h"
#include "switchboard/operator_logic/rotation.h"

namespace switchboard::operator_logic {
namespace internal {

std::vector<SelectedBackend> SelectBackends(const api::NatsServerView& sv,
                                            const BackendSource& backends,
                                            const SecretLookup& secret,
                                            std::vector<std::string>& skipped) {
  const api::ObjectKey server_key = sv.key();
  std::vector<SelectedBackend> selected;
  backends([&](const nlohmann::json& backend) {
    const nlohmann::json* b = &backend;
    api::BackendView bv(*b);
    if (bv.bound_server() != server_key) return;
    const std::string key = bv.key().ToString();
    if (api::IsDeleting(*b)) {
      skipped.push_back(key + ": being deleted");
      return;
    }
    if (!sv.AllowsNamespace(bv.ns())) {
      skipped.push_back(key + ": namespace not admitted by spec.allowedNamespaces");
      return;
    }
    const std::string secret_name = api::DefaultCredentialsSecretName(bv.name());
    const nlohmann::json* s = secret(bv.ns(), secret_name);
    if (s == nullptr) {
      skipped.push_back(key + ": no credentials Secret yet");
      return;
    }
    if (CheckOwnership(*s, api::UidOf(*b)) != Ownership::kOwned) {
      skipped.push_back(key + ": Secret " + secret_name + " is not owned by it");
      return;
    }
    if (api::HasAnnotation(*s, kSecretConflictAnnotation)) {
      skipped.push_back(key + ": SecretConflict");
      return;
    }
    auto data = DecodeSecretData(*s);
    if (!data.ok()) {
      skipped.push_back(key + ": " + data.status().message());
      return;
    }
    auto state = DecodeState(*data);
    if (!state.ok()) {
      skipped.push_back(key + ": " + state.status().message());
      return;
    }
    selected.push_back({bv.ns(), bv.name(), bv.subject_prefix(), api::CreationTimeOf(*b),
                        std::move(state).value(), InstallationLimitsOf(bv, sv)});
  });
  return selected;
}

}  // namespace internal

BackendSource BackendsOf(const std::vector<const nlohmann::json*>& backends) {
  return [&backends](const BackendVisitor& visit) {
    for (const nlohmann::json* b : backends) {
      if (b != nullptr) visit(*b);
    }
  };
}

Result<ClusterRenderInput> CollectInstallations(const nlohmann::json& server,
                                                const std::vector<const nlohmann::json*>& backends,
                                                const SecretLookup& secret) {
  api::NatsServerView sv(server);
  ClusterRenderInput out;
  out.input.server_ns = sv.ns();
  out.input.server_name = sv.name();
  auto max_payload = sv.max_payload();
  if (!max_payload) {
    return Status::InvalidArgument(
        "spec.maxPayload: not a byte quantity; use e.g. 16Mi or 16777216");
  }
  out.input.max_payload = *max_payload;
  auto isolation = ParseIsolation(sv.isolation());
  if (!isolation.ok()) return isolation.status();
  out.input.isolation = *isolation;

  for (internal::SelectedBackend& b :
       internal::SelectBackends(sv, BackendsOf(backends), secret, out.skipped)) {
    Installation inst;
    inst.limits = b.limits;
    inst.ns = std::move(b.ns);
    inst.name = std::move(b.name);
    inst.subject_prefix = std::move(b.subject_prefix);
    inst.users = RenderedUsers(b.state);
    inst.created = b.created;
    out.input.installations.push_back(std::move(inst));
  }
  return out;
}

std::vector<NatsUser> UsersInConfig(std::string_view text) {
  // AppendUser writes `{user: "<name>", password: "<hash>"`; names and
  // hashes contain neither quotes nor backslashes (render refuses them).
  static constexpr std::string_view kUser = "{user: \"";
  static constexpr std::string_view kPassword = "\", password: \"";
  std::vector<NatsUser> users;
  size_t pos = 0;
  while ((pos = text.find(kUser, pos)) != std::string_view::npos) {
    pos += kUser.size();
    size_t name_end = text.find(kPassword, pos);
    if (name_end == std::string_view::npos) break;
    size_t hash_start = name_end + kPassword.size();
    size_t hash_end = text.find('"', hash_start);
    if (hash_end == std::string_view::npos) break;
    users.push_back({std::string(text.substr(pos, name_end - pos)),
                     std::string(text.substr(hash_start, hash_end - hash_start))});
    pos = hash_end;
  }
  return users;
}

}  // namespace switchboard::operator_logic
