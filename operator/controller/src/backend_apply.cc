// The apply step of a PubSubBackend reconcile: its finalizer and the Secrets
// it owns. Each write is skipped when the object already says the same.
#include "backend_step.h"
#include "secret_cache.h"
#include "secret_io.h"
#include "switchboard/operator_logic/env.h"
#include "switchboard/operator_logic/objects.h"

namespace switchboard::operator_controller {
namespace logic = ::switchboard::operator_logic;

namespace {
// RecentWrites key of a finalizer this process added: two "/", so it never
// equals a Secret's "<ns>/<name>" (names and namespaces hold no "/").
std::string FinalizerWriteKey(const std::string& uid) { return "finalizer/" + uid + "/"; }
}  // namespace

// JSON patches whose "test" ops guard the exact list element: safe against
// concurrent writers without a resourceVersion.
Status BackendReconciler::Impl::EnsureFinalizer() {
  const bool has_new = HasFinalizer(obj, logic::kFinalizer);
  const std::string version = kube::ResourceVersionOf(obj);
  const json& fs = obj["metadata"].value("finalizers", json::array());
  int legacy = -1;
  for (size_t i = 0; i < fs.size(); i++) {
    if (fs[i].is_string() && fs[i].get_ref<const std::string&>() == kLegacyFinalizer) {
      legacy = static_cast<int>(i);
    }
  }
  json patch;
  if (legacy >= 0) {
    const std::string path = "/metadata/finalizers/" + std::to_string(legacy);
    patch = json::array({{{"op", "test"}, {"path", path}, {"value", kLegacyFinalizer}}});
    if (has_new) {
      patch.push_back({{"op", "remove"}, {"path", path}});
    } else {
      patch.push_back({{"op", "replace"}, {"path", path}, {"value", logic::kFinalizer}});
    }
  } else if (has_new) {
    return Status::Ok();
  } else if (ctx.recent && ctx.recent->Fresh(FinalizerWriteKey(uid), json(version))) {
    // Added a moment ago to exactly this version: the cache has not caught
    // up yet (a second patch would be a write for nothing).
    return Status::Ok();
  } else if (obj["metadata"].contains("finalizers") && obj["metadata"]["finalizers"].is_array()) {
    patch = json::array(
        {{{"op", "add"}, {"path", "/metadata/finalizers/-"}, {"value", logic::kFinalizer}}});
  } else {
    patch = json::array({{{"op", "add"},
                          {"path", "/metadata/finalizers"},
                          {"value", json::array({logic::kFinalizer})}}});
  }
  auto r = ctx.client->Patch(kube::resources::PubSubBackend(), view.ns(), view.name(),
                             kube::PatchType::kJson, patch);
  if (!r.ok()) return r.status();
  if (ctx.recent) ctx.recent->Created(FinalizerWriteKey(uid), json(version));
  // The status this reconcile computes holds for the version the write made
  // as long as it is the spec that was read; otherwise the status write is
  // refused and the reconcile retried.
  if (GenerationOf(*r) == GenerationOf(obj)) status_version = kube::ResourceVersionOf(*r);
  return Status::Ok();
}

Status BackendReconciler::Impl::RemoveFinalizers() {
  const json& fs = obj["metadata"].value("finalizers", json::array());
  json patch = json::array();
  for (size_t i = fs.size(); i-- > 0;) {
    if (!fs[i].is_string()) continue;
    const std::string& f = fs[i].get_ref<const std::string&>();
    if (f != logic::kFinalizer && f != kLegacyFinalizer) continue;
    const std::string path = "/metadata/finalizers/" + std::to_string(i);
    patch.push_back({{"op", "test"}, {"path", path}, {"value", f}});
    patch.push_back({{"op", "remove"}, {"path", path}});
  }
  if (patch.empty()) return Status::Ok();
  auto r = ctx.client->Patch(kube::resources::PubSubBackend(), view.ns(), view.name(),
                             kube::PatchType::kJson, patch);
  if (!r.ok() && r.status().code() == StatusCode::kNotFound) return Status::Ok();
  return r.status();
}

Result<bool> BackendReconciler::Impl::WriteEnv(const logic::SecretData& env) {
  const std::string name = view.env_secret_name();
  kube::ObjectPtr cached = ctx.secrets->Get(view.ns(), name);
  json desired = logic::EnvSecret({view.ns(), view.name(), uid}, name, env);
  auto w = WriteOwnedSecret(ctx.client, desired, cached.get(), uid, ctx.recent);
  if (!w.ok()) {
    if (w.status().code() == StatusCode::kFailedPrecondition) return false;
    return w.status();
  }
  in.env_secret_name = name;
  in.env_secret_hash = logic::EnvHash(env);
  return true;
}

Status BackendReconciler::Impl::WriteCredentials(const logic::CredentialState& state, bool conflict,
                                                 const json* cached) {
  json desired = logic::CredentialsSecret({view.ns(), view.name(), uid}, state);
  if (conflict) {
    desired["metadata"]["annotations"][std::string(logic::kSecretConflictAnnotation)] =
        view.env_secret_name();
  }
  return WriteOwnedSecret(ctx.client, desired, cached, uid, ctx.recent).status();
}

}  // namespace switchboard::operator_controller
