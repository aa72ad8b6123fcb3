// The read step of a PubSubBackend reconcile: typed views of the caches and
// of the Secrets a user references. Decides nothing and writes nothing but
// the probe's CA file.
#include <fstream>

#include "backend_step.h"
#include "config_index.h"
#include "secret_cache.h"
#include "secret_io.h"
#include "switchboard/api/constants.h"
#include "switchboard/api/names.h"
#include "switchboard/operator_logic/callout.h"
#include "switchboard/operator_logic/env.h"
#include "switchboard/operator_logic/objects.h"
#include "switchboard/operator_logic/time_util.h"

namespace switchboard::operator_controller {
namespace logic = ::switchboard::operator_logic;
namespace reasons = ::switchboard::operator_logic::reasons;
using logic::Step;

Found<StoredCredentials> ReadStoredCredentials(const ReconcileContext& ctx,
                                               const api::BackendView& view,
                                               const std::string& uid) {
  const std::string name = api::DefaultCredentialsSecretName(view.name());
  StoredCredentials out;
  out.secret = ctx.secrets->Get(view.ns(), name);
  if (!out.secret) return out;
  if (logic::CheckOwnership(*out.secret, uid) != logic::Ownership::kOwned) {
    return Finding{Step::kCredentials, reasons::kSecretConflict,
                   logic::ForeignSecretMessage(view.ns(), name), Action::AwaitChange()};
  }
  out.marked_conflict = !Annotation(*out.secret, logic::kSecretConflictAnnotation).empty();
  auto data = logic::DecodeSecretData(*out.secret);
  if (!data.ok()) {
    return Finding{Step::kCredentials, reasons::kCredentialsNotFound, data.status().message(),
                   Action::AwaitChange()};
  }
  auto state = logic::DecodeState(*data);
  if (!state.ok()) {
    return Finding{Step::kCredentials, reasons::kCredentialsNotFound, state.status().message(),
                   Action::AwaitChange()};
  }
  out.state = std::move(state).value();
  return out;
}

Result<std::optional<std::string>> ReadSecretKey(const ReconcileContext& ctx, const std::string& ns,
                                                 const std::string& name, const std::string& key) {
  auto s = GetSecretOrNull(ctx.client, ns, name);
  if (!s.ok()) return s.status();
  if (s->is_null()) return std::optional<std::string>();
  auto d = logic::DecodeSecretData(*s);
  if (!d.ok()) return std::optional<std::string>();
  auto it = d->find(key);
  if (it == d->end()) return std::optional<std::string>();
  return std::optional<std::string>(std::move(it->second));
}

Result<Found<logic::CredentialInputs>> ReadCredentialInputs(const ReconcileContext& ctx,
                                                            const json& obj,
                                                            const api::BackendView& view,
                                                            const std::string& uid) {
  logic::CredentialInputs ci;
  ci.username = view.username();
  ci.rotate_token = Annotation(obj, api::kRotatePasswordAnnotation);
  ci.ack_token = Annotation(obj, api::kRotationAcknowledgedAnnotation);
  auto grace = logic::ParseDuration(view.rotation_grace_period(),
                                    "spec.nats.credentials.rotationGracePeriod");
  if (!grace.ok()) {
    return Found<logic::CredentialInputs>(Finding{Step::kValidate, reasons::kInvalidSpec,
                                                  grace.status().message(), Action::Terminal()});
  }
  ci.grace_period = *grace;
  ci.now = logic::Clock::now();
  if (auto ref = view.password_secret()) {
    auto pw = ReadSecretKey(ctx, view.ns(), ref->name, ref->key);
    if (!pw.ok()) return pw.status();
    if (!*pw || (*pw)->empty()) {
      return Found<logic::CredentialInputs>(
          Finding{Step::kCredentials, reasons::kCredentialsNotFound,
                  "Secret " + view.ns() + "/" + ref->name + " key \"" + ref->key +
                      "\" (spec.nats.credentials.passwordSecretRef) not found; create it with "
                      "the password",
                  Action::AwaitChange()});
    }
    ci.external_password = std::move(**pw);
  }
  kube::ObjectPtr env_secret = ctx.secrets->Get(view.ns(), view.env_secret_name());
  if (env_secret && logic::CheckOwnership(*env_secret, uid) == logic::Ownership::kOwned) {
    auto d = logic::DecodeSecretData(*env_secret);
    if (d.ok()) {
      auto it = d->find(std::string(logic::kEnvNatsUsername));
      if (it != d->end()) ci.env_username = it->second;
    }
  }
  return Found<logic::CredentialInputs>(std::move(ci));
}

Result<std::string> ReadCa(const ReconcileContext& ctx, const api::NatsServerView& server) {
  auto ref = server.ca_secret();
  if (!ref) return std::string();
  auto found = ReadSecretKey(ctx, server.ns(), ref->name, ref->key);
  if (!found.ok()) return found.status();
  const logic::CalloutCaDecision d = logic::DecideCalloutCa(server.ns(), ref, *found);
  if (!d.problem.empty()) {
    return *found && !(*found)->empty() ? Status::FailedPrecondition(d.problem)
                                        : Status::NotFound(d.problem);
  }
  return d.ca.value_or(std::string());
}

std::string CaFileOf(const ReconcileContext& ctx, const api::NatsServerView& server,
                     const std::string& pem) {
  if (pem.empty()) return std::string();
  std::string path = ctx.ca_dir + "/" + server.ns() + "_" + server.name() + ".crt";
  std::ofstream(path, std::ios::trunc) << pem;
  return path;
}

Result<std::string> CaFile(const ReconcileContext& ctx, const api::NatsServerView& server) {
  auto pem = ReadCa(ctx, server);
  if (!pem.ok()) return pem.status();
  return CaFileOf(ctx, server, *pem);
}

logic::UserPath UserPathOf(const api::NatsServerView& server, const logic::RetryTiming& timing) {
  if (server.auth_callout()) {
    logic::ThroughAuthorizers authorizers;
    authorizers.authorizer_sync = timing.authorizer_sync;
    return authorizers;
  }
  return logic::ThroughFile{};
}

bool ConfigHolds(const ReconcileContext& ctx, const SecretRecord* config_secret,
                 const api::NatsServerView& server, const std::string& username,
                 const std::string& bcrypt) {
  auto users = ctx.configs->Get(config_secret, server.config_key());
  return users->count(ConfigIndex::Entry(username, bcrypt)) > 0;
}

}  // namespace switchboard::operator_controller
