#include "switchboard/operator_controller/config_sync.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "switchboard/common/base64.h"

namespace switchboard::operator_controller {

Result<bool> WriteFileIfChanged(const std::string& path, const std::string& content) {
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::stringstream ss;
      ss << in.rdbuf();
      if (ss.str() == content) return false;
    }
  }
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Unavailable("cannot write " + tmp + ": " + std::strerror(errno));
  size_t off = 0;
  while (off < content.size()) {
    ssize_t n = ::write(fd, content.data() + off, content.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::string err = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return Status::Unavailable("cannot write " + tmp + ": " + err);
    }
    off += static_cast<size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string err = std::strerror(errno);
    ::unlink(tmp.c_str());
    return Status::Unavailable("cannot rename to " + path + ": " + err);
  }
  return true;
}

Result<std::string> SecretValue(const std::string& secret_json_text, const std::string& key) {
  auto j = nlohmann::json::parse(secret_json_text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::InvalidArgument("not a JSON object");
  auto data = j.find("data");
  if (data == j.end() || !data->is_object() || !data->contains(key) || !(*data)[key].is_string()) {
    return Status::NotFound("the Secret has no data key \"" + key + "\"");
  }
  auto decoded = base64::Decode((*data)[key].get_ref<const std::string&>());
  if (!decoded) return Status::InvalidArgument("the config Secret's value is not valid base64");
  return *decoded;
}

Result<pid_t> ReadPidFile(const std::string& path) {
  std::ifstream in(path);
  long pid = 0;
  if (!(in >> pid) || pid <= 1) {
    return Status::NotFound("no pid in " + path + "; is the server running?");
  }
  return static_cast<pid_t>(pid);
}

Result<std::string> VarzConfigLoadTime(std::string_view varz_json_text) {
  auto j = nlohmann::json::parse(varz_json_text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::InvalidArgument("the /varz answer is not a JSON object");
  }
  auto t = j.find("config_load_time");
  if (t == j.end() || !t->is_string() || t->get_ref<const std::string&>().empty()) {
    return Status::InvalidArgument("the /varz answer has no config_load_time");
  }
  return t->get<std::string>();
}

}  // namespace switchboard::operator_controller
