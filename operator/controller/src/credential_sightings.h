// AuthCallout mode has no file to wait for: what a refused probe waits for
// is the authorizers' caches seeing the credentials Secret. This remembers
// when this process first saw each backend's password (by its hash), so a
// refusal soon after a new password reads as "not seen yet" and a later one
// as wrong credentials. A derived cache: after a restart every backend
// counts from its first sight in this process. Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace switchboard::operator_controller {

class CredentialSightings {
 public:
  // How long ago this process first saw backend `backend_key` with password
  // hash `bcrypt`: zero the first time; a new hash (a rotation) starts again.
  std::chrono::milliseconds Since(
      const std::string& backend_key, const std::string& bcrypt,
      std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());
  // The backend is gone.
  void Forget(const std::string& backend_key);

 private:
  std::mutex mu_;
  // backend key -> (bcrypt, first seen); guarded by mu_
  std::map<std::string, std::pair<std::string, std::chrono::steady_clock::time_point>> seen_;
};

}  // namespace switchboard::operator_controller
