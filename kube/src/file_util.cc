#include "file_util.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace switchboard::kube::internal {

Result<std::string> ReadWholeFile(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int err = errno;
    std::string m = what + ": cannot read " + path + ": " + std::strerror(err);
    if (err == EACCES) return Status::PermissionDenied(m);
    return Status::NotFound(m);
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace switchboard::kube::internal
