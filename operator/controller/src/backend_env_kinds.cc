// The rabbitmq and postgres flows: no server of ours to provision, only the
// env Secret the engine reads; Ready=True EnvSecretWritten once it is.
#include "backend_step.h"
#include "switchboard/operator_logic/env.h"

namespace switchboard::operator_controller {
namespace logic = ::switchboard::operator_logic;
namespace reasons = ::switchboard::operator_logic::reasons;
using logic::Step;

Result<Action> BackendReconciler::Impl::Rabbit() {
  auto ref = view.rabbitmq_url_secret();
  if (!ref) return Invalid({{{"spec.rabbitmq.urlSecretRef", "is required"}}});
  auto url = ReadSecretKey(ctx, view.ns(), ref->name, ref->key);
  if (!url.ok()) return url.status();
  const std::string where = "Secret " + view.ns() + "/" + ref->name + " key \"" + ref->key + "\"";
  if (!*url || (*url)->empty()) {
    return Fail(
        Step::kCredentials, reasons::kCredentialsNotFound,
        where + " (spec.rabbitmq.urlSecretRef) not found; create it with the amqp(s):// URL",
        Action::AwaitChange());
  }
  // The rules cannot see Secret contents; the URL is never echoed (it may
  // hold a password).
  const std::string& u = **url;
  if (u.rfind("amqp://", 0) != 0 && u.rfind("amqps://", 0) != 0) {
    return Fail(Step::kCredentials, reasons::kInvalidSpec,
                where + " is not an amqp:// or amqps:// URL", Action::AwaitChange());
  }
  Passed(Step::kCredentials, "RabbitMQ URL found");
  return EnvOnly(logic::RabbitMqEnv(u, view.max_pub_chans(), view.max_sub_chans()));
}

Result<Action> BackendReconciler::Impl::Postgres() {
  return EnvOnly(logic::PostgresEnv(view.max_conns(), view.min_conns()));
}

Result<Action> BackendReconciler::Impl::EnvOnly(const logic::SecretData& env) {
  auto w = WriteEnv(env);
  if (!w.ok()) return w.status();
  if (!*w) return EnvConflict();
  Passed(Step::kEnvSecret, "Secret " + in.env_secret_name + " written");
  return Report(Action::AwaitChange());
}

}  // namespace switchboard::operator_controller
