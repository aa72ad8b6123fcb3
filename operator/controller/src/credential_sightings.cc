#include "credential_sightings.h"

namespace switchboard::operator_controller {

std::chrono::milliseconds CredentialSightings::Since(const std::string& backend_key,
                                                     const std::string& bcrypt,
                                                     std::chrono::steady_clock::time_point now) {
  std::lock_guard lock(mu_);
  auto& seen = seen_[backend_key];
  if (seen.first != bcrypt) seen = {bcrypt, now};
  return std::chrono::duration_cast<std::chrono::milliseconds>(now - seen.second);
}

void CredentialSightings::Forget(const std::string& backend_key) {
  std::lock_guard lock(mu_);
  seen_.erase(backend_key);
}

}  // namespace switchboard::operator_controller
