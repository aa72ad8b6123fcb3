#include "switchboard/operator_logic/env.h"

#include "hash.h"
#include "switchboard/api/constants.h"

namespace switchboard::operator_logic {

SecretData NatsEnv(std::string_view url, std::string_view username, std::string_view password,
                   std::string_view subject_prefix) {
  return {
      {std::string(kEnvKind), std::string(api::kBackendNats)},
      {std::string(kEnvNatsUrl), std::string(url)},
      {std::string(kEnvNatsUsername), std::string(username)},
      {std::string(kEnvNatsPassword), std::string(password)},
      {std::string(kEnvNatsSubjectPrefix), std::string(subject_prefix)},
  };
}

SecretData RabbitMqEnv(std::string_view url, int64_t max_pub_chans, int64_t max_sub_chans) {
  return {
      {std::string(kEnvKind), std::string(api::kBackendRabbitmq)},
      {std::string(kEnvRabbitMqUrl), std::string(url)},
      {std::string(kEnvRabbitMqMaxPubChans), std::to_string(max_pub_chans)},
      {std::string(kEnvRabbitMqMaxSubChans), std::to_string(max_sub_chans)},
  };
}

SecretData PostgresEnv(int64_t max_conns, int64_t min_conns) {
  return {
      {std::string(kEnvKind), std::string(api::kBackendPostgres)},
      {std::string(kEnvPostgresMaxConns), std::to_string(max_conns)},
      {std::string(kEnvPostgresMinConns), std::to_string(min_conns)},
  };
}

std::string EnvHash(const SecretData& data) {
  internal::Sha256 h;
  for (const auto& [key, value] : data) {
    h.Update(std::to_string(key.size()) + ":");
    h.Update(key);
    h.Update(std::to_string(value.size()) + ":");
    h.Update(value);
  }
  return "sha256:" + h.Hex();
}

}  // namespace switchboard::operator_logic
