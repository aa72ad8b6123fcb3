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
                                            const std::vector<const InstallationRecord*>& records,
                                            std::vector<std::string>& skipped) {
  const api::ObjectKey server_key = sv.key();
  const bool accounts = sv.isolation() == api::kIsolationAccounts;
  const LimitsPolicy policy = accounts ? LimitsPolicyOf(sv) : LimitsPolicy{};
  std::vector<SelectedBackend> selected;
  selected.reserve(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    const InstallationRecord* r = records[i];
    if (r == nullptr || r->server != server_key) continue;
    if (r->deleting) {
      skipped.push_back(r->key() + ": being deleted");
      continue;
    }
    if (!sv.AllowsNamespace(r->ns)) {
      skipped.push_back(r->key() + ": namespace not admitted by spec.allowedNamespaces");
      continue;
    }
    if (!r->credentials) {
      skipped.push_back(r->key() + ": " + r->skipped);
      continue;
    }
    selected.push_back(
        {r, i, accounts ? EffectiveLimits(r->limits, policy) : InstallationLimits{}});
  }
  return selected;
}

std::vector<InstallationRecord> RecordsBoundTo(const api::NatsServerView& sv,
                                               const std::vector<const nlohmann::json*>& backends,
                                               const SecretLookup& secret) {
  const api::ObjectKey server_key = sv.key();
  std::vector<InstallationRecord> out;
  for (const nlohmann::json* b : backends) {
    if (b == nullptr) continue;
    api::BackendView bv(*b);
    // Only the backends of this server: their Secrets alone are decoded.
    if (bv.bound_server() != server_key) continue;
    const nlohmann::json* s = secret(bv.ns(), api::DefaultCredentialsSecretName(bv.name()));
    if (s == nullptr) {
      out.push_back(RecordOf(*b, nullptr));
    } else {
      const CredentialsSecretFacts facts = CredentialsSecretFactsOf(*s);
      out.push_back(RecordOf(*b, &facts));
    }
  }
  return out;
}

std::vector<const InstallationRecord*> Pointers(const std::vector<InstallationRecord>& records) {
  std::vector<const InstallationRecord*> out;
  out.reserve(records.size());
  for (const InstallationRecord& r : records) out.push_back(&r);
  return out;
}

}  // namespace internal

Result<ClusterRenderInput> CollectInstallations(const nlohmann::json& server,
                                                const std::vector<const nlohmann::json*>& backends,
                                                const SecretLookup& secret) {
  const std::vector<InstallationRecord> records =
      internal::RecordsBoundTo(api::NatsServerView(server), backends, secret);
  return CollectInstallations(server, internal::Pointers(records));
}

Result<ClusterRenderInput> CollectInstallations(
    const nlohmann::json& server, const std::vector<const InstallationRecord*>& records) {
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

  for (const internal::SelectedBackend& b : internal::SelectBackends(sv, records, out.skipped)) {
    Installation inst;
    inst.limits = b.limits;
    inst.ns = b.record->ns;
    inst.name = b.record->name;
    inst.subject_prefix = b.record->subject_prefix;
    inst.users = RenderedUsers(*b.record->credentials);
    inst.created = b.record->created;
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
