#include "desired.h"

#include "switchboard/operator/credentials.h"
#include "switchboard/operator/env.h"
#include "switchboard/operator/render.h"

namespace switchboard::controller {

namespace logic = ::switchboard::operator_logic;

Result<std::string> GeneratePassword() { return logic::GeneratePassword(); }

Result<std::string> BcryptHash(const std::string& password) { return logic::BcryptHash(password); }

Result<std::string> BcryptHashGenerated(const std::string& password) {
  return logic::BcryptHash(password, logic::kGeneratedPasswordBcryptCost);
}

Result<Rendered> RenderInclude(const RenderInput& in) {
  logic::RenderInput li;
  auto slash = in.server_key.find('/');
  li.server_ns = in.server_key.substr(0, slash);
  li.server_name = slash == std::string::npos ? in.server_key : in.server_key.substr(slash + 1);
  li.max_payload = in.max_payload;
  auto iso = logic::ParseIsolation(in.isolation);
  if (!iso.ok()) return iso.status();
  li.isolation = *iso;
  for (const auto& e : in.entries) {
    if (e.users.empty()) continue;
    logic::Installation inst;
    auto es = e.backend_key.find('/');
    inst.ns = e.backend_key.substr(0, es);
    inst.name = e.backend_key.substr(es + 1);
    // Every user of one backend shares its "<prefix>.*" subject.
    const std::string& subject = e.users.front().subject;
    inst.subject_prefix = subject.size() > 2 ? subject.substr(0, subject.size() - 2) : subject;
    for (const auto& u : e.users) inst.users.push_back({u.username, u.bcrypt});
    li.installations.push_back(std::move(inst));
  }
  auto r = logic::RenderNatsConfig(li);
  if (!r.ok()) return r.status();
  Rendered out;
  out.text = std::move(r->text);
  out.hash = std::move(r->hash);
  for (const auto& rej : r->rejected) out.rejected.push_back(rej.ToString());
  return out;
}

SecretData NatsEnv(const std::string& url, const std::string& username, const std::string& password,
                   const std::string& prefix) {
  return logic::NatsEnv(url, username, password, prefix);
}

SecretData RabbitEnv(const std::string& url, int64_t max_pub, int64_t max_sub) {
  return logic::RabbitMqEnv(url, max_pub, max_sub);
}

SecretData PostgresEnv(int64_t max_conns, int64_t min_conns) {
  return logic::PostgresEnv(max_conns, min_conns);
}

std::string EnvHash(const SecretData& data) { return logic::EnvHash(data); }

int64_t ParseQuantity(const json& value) {
  auto q = logic::ParseByteQuantity(value, "spec.maxPayload");
  return q.ok() ? *q : -1;
}

}  // namespace switchboard::controller
