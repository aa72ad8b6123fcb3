// The bearer token to send: a static one, or a file (a projected
// service-account token) re-read whenever it changes on disk.
#pragma once

#include <sys/types.h>

#include <ctime>
#include <mutex>
#include <string>

#include "switchboard/common/status.h"

namespace switchboard::kube::internal {

class TokenSource {
 public:
  TokenSource(std::string static_token, std::string token_file);
  // Empty string when there is no token. Re-reads the file when its mtime or
  // size changed since the last read (one stat(2) per call). Thread-safe.
  Result<std::string> Token();

 private:
  const std::string static_token_;
  const std::string file_;
  std::mutex mu_;
  std::string cached_;        // guarded by mu_
  struct timespec mtime_ {};  // guarded by mu_
  off_t size_ = -1;           // guarded by mu_
};

}  // namespace switchboard::kube::internal
