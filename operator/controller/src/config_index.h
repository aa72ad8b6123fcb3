// Which users a NatsServer's config Secret holds, parsed once per
// resourceVersion (a file of 1,000 users is ~250 KB; every backend's
// reconcile asks whether its user is in it). A derived cache of the
// owned-Secrets informer, never a source of truth. Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "k8s_util.h"

namespace switchboard::operator_controller {

class ConfigIndex {
 public:
  using Users = std::set<std::string>;  // "<user>\n<bcrypt>"
  static std::string Entry(const std::string& user, const std::string& bcrypt) {
    return user + "\n" + bcrypt;
  }

  // The users in `secret` (a config Secret; may be null) under `key`.
  std::shared_ptr<const Users> Get(const json* secret, const std::string& key);
  // When this process first saw the current version of the Secret (a probe
  // refused soon after means "not reloaded yet", not "wrong password").
  std::chrono::steady_clock::time_point SeenAt(const json* secret);

 private:
  struct Entry_ {
    std::string version;
    std::shared_ptr<const Users> users;
    std::chrono::steady_clock::time_point seen;
  };
  Entry_& Refresh(const json& secret, const std::string& key);
  std::mutex mu_;
  std::map<std::string, Entry_> by_secret_;  // "<ns>/<name>"; guarded by mu_
};

}  // namespace switchboard::operator_controller
